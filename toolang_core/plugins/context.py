"""What a plugin's factory receives when the runtime builds one of its components."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from toolang_core.config.model import ToolangConfig


@attrs.frozen
class PluginContext:
    """The slice of the runtime a plugin component may see.

    ``settings`` is the plugin's own validated ``[plugins.<name>]`` section (an instance
    of the class it registered through ``toolang_register_settings``), or ``None`` when
    it registered none. ``home`` is the runtime's state directory; a plugin keeps its
    files under ``home / plugin_name`` or in the execution store's database.

    A runtime's contexts always offer the service ``"plugin_databases"``: the store
    backend's :class:`~toolang_core.PluginDatabases` (SQLite files under
    ``home / "plugins"``, or e.g. a PostgreSQL schema per plugin), for a component that
    keeps its tables on the store's backend — it opens its database there and closes it.
    """

    plugin_name: str
    config: ToolangConfig
    settings: Any = None
    services: dict[str, Any] = attrs.field(factory=dict)

    @property
    def home(self) -> Path:
        return self.config.home

    def service(self, name: str) -> Any:
        """Return a runtime service (``"store"``, ``"memory"``, …) by name.

        :raises KeyError: with the names that are available, when ``name`` is not one.
        """
        try:
            return self.services[name]
        except KeyError:
            available = ", ".join(sorted(self.services)) or "none"
            raise KeyError(f"no runtime service {name!r} (available: {available})") from None
