"""Which backend keeps plugins' tables: the store's, when its plugin offers one.

``toolang_register_plugin_databases`` registrations are keyed by the store backend
they serve; the one named like ``[store] backend`` is built once per runtime. Without
one (the built-in SQLite store, a store plugin that offers none) plugins' tables are
SQLite files under ``<home>/plugins``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from toolang_core.plugins.context import PluginContext

if TYPE_CHECKING:
    from toolang_core.config.model import ToolangConfig
    from toolang_core.plugins.host import PluginHost
    from toolang_core.store.plugin_tables import PluginDatabases, PluginDatabasesFactory

KIND = "plugin database"


def plugin_databases_for(
    config: ToolangConfig, host: PluginHost, settings: Mapping[str, Any]
) -> PluginDatabases:
    """The plugin databases of the configured store backend (SQLite files by default)."""
    registration = host.components.of_kind(KIND).get(config.store.backend)
    if registration is None:
        from toolang_core.store.sqlite.plugin_tables import SqlitePluginDatabases

        return SqlitePluginDatabases(config.home / "plugins", synchronous=config.store.synchronous)
    context = PluginContext(
        plugin_name=registration.plugin,
        config=config,
        settings=settings.get(registration.plugin),
    )
    return cast("PluginDatabasesFactory", registration.factory)(context)
