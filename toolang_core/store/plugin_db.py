"""SQLite databases for plugins' own tables, with the same guards as the store.

A plugin that needs real tables (indexes, aggregates, full-text search) declares them
as a ``sqlite_utils.Migrations`` set and opens its database here. Opening it applies
the set's pending migrations in one transaction, switches the file to WAL, and
refuses — without changing a byte — a file that is not a database, a file that has
tables but none of this set's migrations, and a file written by a newer version of
the plugin (a migration of the set that this code does not know). Read-only opens
never create or migrate.

The file lives wherever the plugin says; :meth:`toolang_core.Runtime.plugin_database`
puts it at ``<home>/plugins/<plugin>.db`` and keeps one connection per runtime.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlite_utils import Database, Migrations

from toolang_core.store.errors import StoreCorrupt, StoreMissing
from toolang_core.store.migrations import pending_migrations
from toolang_core.store.sqlite.connection import connect, use_wal
from toolang_core.store.sqlite.migrate import applied_and_tables, migrate_file


def open_plugin_database(
    path: Path,
    migrations: Migrations,
    *,
    read_only: bool = False,
    synchronous: str = "normal",
    busy_timeout: float = 10.0,
) -> Database:
    """Open (and create or migrate) the SQLite database of a plugin at ``path``.

    Transactions are explicit (autocommit mode): wrap writes in ``db.atomic()`` or
    ``with db.conn:`` where several statements must hold together.

    :raises StoreMissing: read-only and the file does not exist yet.
    :raises StoreCorrupt: the file is not a database, or belongs to something else.
    :raises StoreSchemaTooNew: the file has migrations of this set the code does not know.
    :raises StoreNeedsMigration: read-only and migrations are pending.
    """
    if read_only and not path.exists():
        raise StoreMissing(
            f"no database of {migrations.name!r} at {path} yet; it is created the first "
            "time the plugin writes (e.g. while `toolang run` serves)"
        )
    conn = connect(path, read_only=read_only, synchronous=synchronous, busy_timeout=busy_timeout)
    try:
        _prepare(conn, path, migrations, migrate=not read_only)
        if not read_only:
            use_wal(conn, path, wait_seconds=busy_timeout)
    except BaseException:
        conn.close()
        raise
    return Database(conn)


def known_migrations(migrations: Migrations) -> list[str]:
    """The names of every migration of the set, in order (read off an empty database)."""
    return [m.name for m in migrations.pending(Database(memory=True))]


def _prepare(
    conn: sqlite3.Connection, path: Path, migrations: Migrations, *, migrate: bool
) -> None:
    migrate_file(
        conn, path, migrations, pending=lambda: _pending(conn, path, migrations), migrate=migrate
    )


def _pending(conn: sqlite3.Connection, path: Path, migrations: Migrations) -> list[str]:
    applied, tables = applied_and_tables(conn, path, migrations)
    pending = pending_migrations(
        known_migrations(migrations),
        applied,
        where=str(path),
        migration_set=migrations.name,
        upgrade=f"the plugin {migrations.name!r}",
    )
    if not applied and tables and "_sqlite_migrations" not in tables:
        raise StoreCorrupt(
            f"{path} is an SQLite database but not one of {migrations.name!r} (it has tables "
            f"{', '.join(sorted(tables)[:5])}); it was left untouched"
        )
    return pending
