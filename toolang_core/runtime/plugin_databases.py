"""A runtime's plugin databases: plugins' own tables, opened once per runtime, on the
backend that keeps them, and closed with the run.

Which backend keeps them: ``toolang_register_plugin_databases`` registrations are keyed
by the store backend they serve; the one named like ``[store] backend`` is built once
per runtime. Without one (the built-in SQLite store, a store plugin that offers none)
plugins' tables are SQLite files under ``<home>/plugins``.

:class:`OpenPluginDatabases` holds what one runtime opened; the runtime's
``plugin_database``, ``read_plugin_database``, ``plugin_databases`` and
``close_plugin_databases`` (the public surface, documented there) hand their work to it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

import structlog

from toolang_core.plugins.context import PluginContext

if TYPE_CHECKING:
    from sqlite_utils import Database, Migrations

    from toolang_core.config.model import ToolangConfig
    from toolang_core.plugins.host import PluginHost
    from toolang_core.store.plugin_tables import (
        PluginDatabase,
        PluginDatabases,
        PluginDatabasesFactory,
        PluginMigrations,
    )
    from toolang_core.tools.threads import ToolThreads

log = structlog.get_logger("toolang.runtime")

KIND = "plugin database"
_PLUGIN_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


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


class LazyOffer:
    """The runtime's offer as a component factory's ``plugin_databases`` service: built
    on the first ``open``, so a factory that never opens costs nothing (and a store
    setting the offer refuses is reported where a database is asked for)."""

    __slots__ = ("_databases",)

    def __init__(self, databases: OpenPluginDatabases) -> None:
        self._databases = databases

    def open(
        self, plugin_name: str, migrations: PluginMigrations, *, read_only: bool = False
    ) -> PluginDatabase:
        return self._databases.offer.open(plugin_name, migrations, read_only=read_only)

    def open_other(self, plugin_name: str) -> PluginDatabase:
        return self._databases.offer.open_other(plugin_name)

    def close(self) -> None:
        """Nothing: the runtime closes its offer (each database is its opener's)."""


class DatabaseOwner(Protocol):
    """What :class:`OpenPluginDatabases` reads of its runtime, at each use (a test may
    give the runtime another configuration between two uses)."""

    config: ToolangConfig
    host: PluginHost
    settings: dict[str, Any]
    tool_threads: ToolThreads


class OpenPluginDatabases:
    """The plugin databases one runtime opened, each once, and the backend's offer."""

    __slots__ = ("_open", "_owner")

    def __init__(self, owner: DatabaseOwner) -> None:
        self._owner = owner
        self._open: dict[str, Any] = {}
        """What is open, by key: ``database:<plugin>:<rw|ro|other>`` and the offer's
        ``databases:offer``."""

    @property
    def offer(self) -> PluginDatabases:
        """The store backend's offer, built on first use."""
        key = "databases:offer"
        if key not in self._open:
            owner = self._owner
            self._open[key] = plugin_databases_for(owner.config, owner.host, owner.settings)
        return self._open[key]  # type: ignore[no-any-return]

    def own(
        self,
        plugin_name: str,
        migrations: PluginMigrations | Migrations,
        *,
        read_only: bool,
    ) -> PluginDatabase | Database:
        """``plugin_name``'s own tables, opened (and migrated) on first use."""
        from toolang_core.store.plugin_tables import PluginMigrations

        key = f"database:{plugin_name}:{'ro' if read_only else 'rw'}"
        if key not in self._open:
            if isinstance(migrations, PluginMigrations):
                self._open[key] = self.offer.open(plugin_name, migrations, read_only=read_only)
                return self._open[key]  # type: ignore[no-any-return]
            from toolang_core.store.plugin_db import open_plugin_database

            if not _PLUGIN_NAME.fullmatch(plugin_name):
                raise ValueError(f"plugin name {plugin_name!r} cannot name a database file")
            config = self._owner.config
            path = config.home / "plugins" / f"{plugin_name}.db"
            self._open[key] = open_plugin_database(
                path, migrations, read_only=read_only, synchronous=config.store.synchronous
            )
        return self._open[key]  # type: ignore[no-any-return]

    def other(self, plugin_name: str) -> PluginDatabase | None:
        """Another plugin's database, read only (the offer's ``open_other``), opened on
        first use; ``None`` while it does not exist (asked again on the next call)."""
        from toolang_core.store.errors import StoreMissing

        key = f"database:{plugin_name}:other"
        if key not in self._open:
            try:
                self._open[key] = self.offer.open_other(plugin_name)
            except StoreMissing:
                return None
        return self._open[key]  # type: ignore[no-any-return]

    def close(self) -> None:
        """Close every database opened here, then the offer (all reopen on next use);
        not while a tool function still runs in a worker thread (logged)."""
        if busy := self._owner.tool_threads.busy:
            log.warning("plugin_databases.left_open", tool_threads=busy)
            return
        for key in [k for k in self._open if k.startswith("database:")]:
            self._open.pop(key).close()
        offer = self._open.pop("databases:offer", None)
        if offer is not None:
            offer.close()
