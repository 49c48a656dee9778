"""Plugins' databases as SQLite files: the backend every runtime has.

Each plugin's :class:`~toolang_core.store.plugin_tables.PluginMigrations` become a
``sqlite_utils.Migrations`` set of the same name and migration names, so a file made
by a plugin before it moved to :class:`PluginMigrations` is the same file, with the
same ledger, and opens unchanged (:func:`toolang_core.store.plugin_db.open_plugin_database`
applies the guards).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from weakref import WeakKeyDictionary

from toolang_core.store.plugin_tables import SQLITE, Dialect, PluginMigrations

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator

    from sqlite_utils import Database, Migrations

PLUGIN_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_CLOSE_WAIT_SECONDS: Final = 5.0
_AS_SQLITE: WeakKeyDictionary[PluginMigrations, Migrations] = WeakKeyDictionary()


class SqlitePluginDatabase:
    """A plugin's tables in one SQLite file, on one connection shared by threads: a
    transaction holds the database's lock from its start to its end (another thread's
    statement or transaction waits: on one connection it would otherwise join the open
    transaction, or end it), re-entered by the thread that holds it (nested blocks)."""

    dialect: Final[Dialect] = SQLITE

    def __init__(self, db: Database, *, plugin: str, where: str, read_only: bool) -> None:
        self.sqlite = db
        """The sqlite-utils database, for what only SQLite has (FTS5 helpers …)."""
        self._conn: sqlite3.Connection = db.conn
        self.plugin = plugin
        self.where = where
        self.read_only = read_only
        self._lock = threading.RLock()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        with self._lock:
            return self._conn.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._lock:
            self._conn.executemany(sql, rows)

    def transaction(self) -> AbstractContextManager[None]:
        return self._atomic()

    @contextmanager
    def _atomic(self) -> Iterator[None]:
        with self._lock, self.sqlite.atomic():
            yield

    def close(self) -> None:
        """Close the connection once no thread is inside a statement or transaction on
        it (closing under one crashes the process); after ``_CLOSE_WAIT_SECONDS`` it is
        left open for the process's exit instead."""
        if not self._lock.acquire(timeout=_CLOSE_WAIT_SECONDS):
            return
        try:
            self._conn.close()
        finally:
            self._lock.release()


def as_sqlite_migrations(migrations: PluginMigrations) -> Migrations:
    """``migrations`` as the ``sqlite_utils.Migrations`` set the file's ledger keeps."""
    found = _AS_SQLITE.get(migrations)
    if found is None:
        from sqlite_utils import Migrations

        found = Migrations(migrations.name)
        for name, step in migrations.steps:

            def run(db: Database, step: Any = step) -> None:
                step(SqlitePluginDatabase(db, plugin=migrations.name, where="", read_only=False))

            found(name=name)(run)
        _AS_SQLITE[migrations] = found
    return found


class SqlitePluginDatabases:
    """Plugins' databases as files ``<directory>/<plugin>.db`` (the default backend)."""

    def __init__(self, directory: Path, *, synchronous: str = "normal") -> None:
        self.directory = directory
        self.synchronous = synchronous

    def open(
        self, plugin_name: str, migrations: PluginMigrations, *, read_only: bool = False
    ) -> SqlitePluginDatabase:
        from toolang_core.store.plugin_db import open_plugin_database

        if not PLUGIN_NAME.fullmatch(plugin_name):
            raise ValueError(f"plugin name {plugin_name!r} cannot name a database file")
        path = self.directory / f"{plugin_name}.db"
        db = open_plugin_database(
            path,
            as_sqlite_migrations(migrations),
            read_only=read_only,
            synchronous=self.synchronous,
        )
        return SqlitePluginDatabase(db, plugin=plugin_name, where=str(path), read_only=read_only)

    def open_other(self, plugin_name: str) -> SqlitePluginDatabase:
        from sqlite_utils import Database

        from toolang_core.store.errors import StoreMissing
        from toolang_core.store.sqlite.connection import connect

        if not PLUGIN_NAME.fullmatch(plugin_name):
            raise ValueError(f"plugin name {plugin_name!r} cannot name a database file")
        path = self.directory / f"{plugin_name}.db"
        if not path.exists():
            raise StoreMissing(
                f"no database of plugin {plugin_name!r} at {path} yet; it is created the "
                "first time that plugin writes"
            )
        conn = connect(path, read_only=True, synchronous=self.synchronous, busy_timeout=10.0)
        conn.execute("PRAGMA query_only = 1")
        return SqlitePluginDatabase(
            Database(conn), plugin=plugin_name, where=str(path), read_only=True
        )

    def close(self) -> None:
        """Nothing to release: each database closes its own connection."""
