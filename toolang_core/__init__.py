"""toolang: a plugin-host agent runtime.

Plugins import what they need from here; everything else in ``toolang_core`` is
internal. Importing this package is cheap: the markers load eagerly, everything else
on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from toolang_core.markers import hookimpl, hookspec

if TYPE_CHECKING:
    from toolang_core.agents.types import (
        AgentDefinition as AgentDefinition,
        AgentLoad as AgentLoad,
        AgentSource as AgentSource,
    )
    from toolang_core.config.model import (
        ToolangConfig as ToolangConfig,
    )
    from toolang_core.config.settings import (
        plugin_settings as plugin_settings,
    )
    from toolang_core.config.types import (
        EnvStr as EnvStr,
        Secret as Secret,
    )
    from toolang_core.errors import (
        ConfigError as ConfigError,
        PluginError as PluginError,
        ToolangError as ToolangError,
    )
    from toolang_core.events import (
        Event as Event,
    )
    from toolang_core.plugins.context import (
        PluginContext as PluginContext,
    )
    from toolang_core.plugins.host import (
        PluginHost as PluginHost,
    )
    from toolang_core.plugins.registrars import (
        RegisterFactory as RegisterFactory,
        RegisterSettings as RegisterSettings,
        RegisterTool as RegisterTool,
    )
    from toolang_core.runtime import (
        Runtime as Runtime,
    )
    from toolang_core.tools.types import (
        Block as Block,
        Denied as Denied,
        Granted as Granted,
        Modify as Modify,
        Observe as Observe,
        Pending as Pending,
        Tool as Tool,
        ToolCall as ToolCall,
        ToolCallContext as ToolCallContext,
        ToolResult as ToolResult,
    )

__version__ = "0.1.0"

_LAZY = {
    "AgentDefinition": "toolang_core.agents.types",
    "AgentLoad": "toolang_core.agents.types",
    "AgentSource": "toolang_core.agents.types",
    "ToolangConfig": "toolang_core.config.model",
    "plugin_settings": "toolang_core.config.settings",
    "EnvStr": "toolang_core.config.types",
    "Secret": "toolang_core.config.types",
    "ConfigError": "toolang_core.errors",
    "PluginError": "toolang_core.errors",
    "ToolangError": "toolang_core.errors",
    "Event": "toolang_core.events",
    "PluginContext": "toolang_core.plugins.context",
    "PluginHost": "toolang_core.plugins.host",
    "RegisterFactory": "toolang_core.plugins.registrars",
    "RegisterSettings": "toolang_core.plugins.registrars",
    "RegisterTool": "toolang_core.plugins.registrars",
    "Runtime": "toolang_core.runtime",
    "Block": "toolang_core.tools.types",
    "Denied": "toolang_core.tools.types",
    "Granted": "toolang_core.tools.types",
    "Modify": "toolang_core.tools.types",
    "Observe": "toolang_core.tools.types",
    "Pending": "toolang_core.tools.types",
    "Tool": "toolang_core.tools.types",
    "ToolCall": "toolang_core.tools.types",
    "ToolCallContext": "toolang_core.tools.types",
    "ToolResult": "toolang_core.tools.types",
}

__all__ = ["__version__", "hookimpl", "hookspec", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolang_core' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
