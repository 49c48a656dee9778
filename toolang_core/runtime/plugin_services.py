"""What one runtime offers its plugins: their per-runtime state, their databases, and
the :class:`~toolang_core.PluginContext` each component factory is handed.

The runtime's ``plugin_context``, ``plugin_state`` and plugin-database methods (the
public surface, documented there) hand their work to :class:`PluginServices`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from toolang_core.plugins.context import PluginContext
from toolang_core.runtime.plugin_databases import DatabaseOwner, LazyOffer, OpenPluginDatabases

T = TypeVar("T")


class PluginServices:
    """One runtime's services to its plugins (its configuration and settings are read
    at each use, like :class:`OpenPluginDatabases` reads them)."""

    __slots__ = ("_owner", "databases", "state")

    def __init__(self, owner: DatabaseOwner) -> None:
        self._owner = owner
        self.state: dict[str, Any] = {}
        """Per-runtime state by name: the plugins' and the runtime's own parts'."""
        self.databases = OpenPluginDatabases(owner)

    def context(self, plugin_name: str, **services: Any) -> PluginContext:
        """``plugin_name``'s factory context; every one offers ``plugin_databases`` (the
        store backend's offer, built on its first ``open``) unless given another."""
        services.setdefault("plugin_databases", LazyOffer(self.databases))
        return PluginContext(
            plugin_name=plugin_name,
            config=self._owner.config,
            settings=self._owner.settings.get(plugin_name),
            services=services,
        )

    def state_of(self, name: str, factory: Callable[[], T]) -> T:
        """The state ``name``: ``factory()`` is called once, on first use (read many
        times a turn, e.g. the memory service: a hit is one dict lookup)."""
        try:
            return self.state[name]  # type: ignore[no-any-return]
        except KeyError:
            made = self.state[name] = factory()
            return made
