"""The ``toolang`` command line. Built-in commands are imported only when used.

Plugins that add commands (``toolang_register_commands``) import what they need from
here: :class:`CliState` and :func:`pass_state` give a command the configuration, the
plugin host, the runtime and the store of the current invocation; the output helpers
print the way every built-in command does.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolang_core.cli.output import (
        ago as ago,
        echo_json as echo_json,
        short as short,
        table as table,
        when as when,
    )
    from toolang_core.cli.state import (
        CliState as CliState,
        pass_state as pass_state,
    )

_LAZY = {
    "ago": "toolang_core.cli.output",
    "echo_json": "toolang_core.cli.output",
    "short": "toolang_core.cli.output",
    "table": "toolang_core.cli.output",
    "when": "toolang_core.cli.output",
    "CliState": "toolang_core.cli.state",
    "pass_state": "toolang_core.cli.state",
}

__all__ = ["CliState", "ago", "echo_json", "pass_state", "short", "table", "when"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolang_core.cli' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
