"""toolang's pluggy ``PluginManager``: the hook specs, a name filter, per-plugin callers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pluggy

from toolang_core.hookspecs import spec_modules
from toolang_core.markers import HOOK_PREFIX, PROJECT_NAME


class ToolangPluginManager(pluggy.PluginManager):
    """A plugin manager that knows toolang's hook specifications.

    Only attributes named ``toolang_*`` are considered hook implementations, which
    makes registration several times faster under pluggy 1.7 and never touches
    unrelated attributes of a plugin object. Create one per runtime with
    :func:`create_plugin_manager`; never share one between runtimes.
    """

    def __init__(self) -> None:
        super().__init__(PROJECT_NAME)
        self._per_plugin: dict[str, tuple[tuple[str, pluggy.HookCaller], ...]] = {}

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> pluggy.HookimplOpts | None:
        if not name.startswith(HOOK_PREFIX):
            return None
        return super().parse_hookimpl_opts(plugin, name)

    def register(self, plugin: Any, name: str | None = None) -> str | None:
        self._per_plugin.clear()
        return super().register(plugin, name)

    def unregister(self, plugin: Any | None = None, name: str | None = None) -> Any | None:
        self._per_plugin.clear()
        return super().unregister(plugin, name)

    def per_plugin_callers(self, hook_name: str) -> tuple[tuple[str, pluggy.HookCaller], ...]:
        """Return ``(plugin name, caller)`` pairs for one hook, in pluggy's call order.

        Each caller runs only that plugin's implementation (and its wrappers), so the
        host can isolate errors, await results and know which plugin answered — all
        through pluggy's public API, keeping its ordering (``tryfirst``/``trylast``,
        last registered first) and wrappers. The pairs are cached until the next
        ``register`` or ``unregister``.
        """
        cached = self._per_plugin.get(hook_name)
        if cached is not None:
            return cached
        caller: pluggy.HookCaller = getattr(self.hook, hook_name)
        ordered: list[Any] = []
        for impl in reversed(caller.get_hookimpls()):
            if impl.plugin not in ordered:
                ordered.append(impl.plugin)
        pairs = tuple(
            (
                self._name_of(plugin),
                self.subset_hook_caller(hook_name, [p for p in ordered if p is not plugin]),
            )
            for plugin in ordered
        )
        self._per_plugin[hook_name] = pairs
        return pairs

    def _name_of(self, plugin: Any) -> str:
        name = self.get_name(plugin)
        return name if name is not None else repr(plugin)


def create_plugin_manager(extra_specs: Iterable[Any] = ()) -> ToolangPluginManager:
    """Return a fresh manager with every toolang hook specification and no plugins."""
    pm = ToolangPluginManager()
    for module in (*spec_modules(), *extra_specs):
        pm.add_hookspecs(module)
    return pm
