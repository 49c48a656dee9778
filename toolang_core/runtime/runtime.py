"""The long-lived runtime object.

A runtime owns its plugin host (and so its plugin manager): two runtimes in one
process never share plugin state.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import structlog

from toolang_core.config.model import ToolangConfig
from toolang_core.config.settings import validate_plugin_settings
from toolang_core.plugins.context import PluginContext
from toolang_core.plugins.facade import HookFailure
from toolang_core.plugins.host import PluginHost
from toolang_core.plugins.loader import LoadPolicy

log = structlog.get_logger("toolang.runtime")

T = TypeVar("T")


class Runtime:
    """A configured runtime: its configuration, its plugins and their settings.

    Build one with :meth:`from_config`; ``start`` and ``stop`` run the lifecycle hooks.
    """

    def __init__(
        self, config: ToolangConfig, host: PluginHost, *, env: Mapping[str, str] | None = None
    ) -> None:
        self.config = config
        self.host = host
        self.settings: dict[str, Any] = validate_plugin_settings(config, host, env=env)
        self.startup_failures: list[HookFailure] = []
        self._plugin_state: dict[str, Any] = {}

    @classmethod
    def from_config(
        cls,
        config: ToolangConfig,
        *,
        env: Mapping[str, str] | None = None,
        strict: bool = False,
        builtins: Iterable[tuple[str, object]] = (),
        load_entrypoints: bool = True,
    ) -> Runtime:
        """Load the plugins ``config`` and the environment allow, then validate settings.

        :raises ConfigError: when the configuration or a plugin's section is invalid.
        :raises PluginError: in strict mode, when any plugin fails.
        """
        env = os.environ if env is None else env
        policy = LoadPolicy.resolve(
            env,
            config_load=config.plugins.load,
            config_disable=config.plugins.disable,
            config_strict=config.plugins.strict,
            strict_flag=strict,
        )
        if load_entrypoints:
            host = PluginHost.from_entry_points(policy, builtins=builtins)
        else:
            host = PluginHost(strict=policy.strict)
            for name, plugin in builtins:
                host.register(plugin, name, builtin=True)
        return cls(config, host, env=env)

    def plugin_context(self, plugin_name: str, **services: Any) -> PluginContext:
        """The context handed to ``plugin_name``'s component factories."""
        return PluginContext(
            plugin_name=plugin_name,
            config=self.config,
            settings=self.settings.get(plugin_name),
            services=services,
        )

    def plugin_state(self, name: str, factory: Callable[[], T]) -> T:
        """Per-runtime state for a plugin: ``factory()`` is called once, on first use.

        Use this instead of module globals: the same plugin module may serve several
        runtimes in one process (tests do this all the time).
        """
        if name not in self._plugin_state:
            self._plugin_state[name] = factory()
        return self._plugin_state[name]  # type: ignore[no-any-return]

    async def start(self) -> None:
        """Run every plugin's ``toolang_startup``; failures are logged and kept."""
        self.startup_failures = await self.host.hooks.startup(self)
        log.info("runtime.started", plugins=self.host.active_names)

    async def stop(self, reason: str = "stop") -> list[HookFailure]:
        """Run every plugin's ``toolang_shutdown`` and return the failures."""
        failures = await self.host.hooks.shutdown(self, reason)
        log.info("runtime.stopped", reason=reason)
        return failures
