"""Guarded migrations of an SQLite file: the one procedure the store and plugins'
databases (:mod:`toolang_core.store.plugin_db`) share.

Reading what a file has applied fails as :class:`StoreCorrupt` without changing it;
pending migrations are applied only when the caller may migrate, inside one
``BEGIN IMMEDIATE`` transaction that checks again what is pending (processes opening a
new file at the same moment wait for each other, and the last finds nothing left to
do), rolled back whole on failure. Each caller keeps its own messages: the store speaks
of "an older schema", a plugin's database names its migration set.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from sqlite_utils import Database, Migrations

from toolang_core.store.errors import StoreCorrupt, StoreNeedsMigration


def applied_and_tables(
    conn: sqlite3.Connection, path: Path, migrations: Migrations
) -> tuple[list[str], list[str]]:
    """The names of the set's applied migrations and the file's own tables.

    :raises StoreCorrupt: the file cannot be read (it is left untouched)."""
    db = Database(conn)
    try:
        applied = [m.name for m in migrations.applied(db)]
        tables = [t for t in db.table_names() if not t.startswith("sqlite_")]
    except sqlite3.DatabaseError as exc:
        raise StoreCorrupt(f"{path} cannot be read ({exc}); it was left untouched") from None
    return applied, tables


def migrate_guarded(
    conn: sqlite3.Connection,
    migrations: Migrations,
    *,
    pending: Callable[[], list[str]],
    migrate: bool,
    needs_migration: Callable[[list[str]], str],
    failed: Callable[[sqlite3.DatabaseError], str],
) -> None:
    """Apply ``migrations`` if ``pending()`` names any and ``migrate`` allows it.

    :raises StoreNeedsMigration: ``needs_migration(pending)`` — migrations are pending
        and the caller may not migrate (a read-only open).
    :raises StoreCorrupt: ``failed(error)`` — a migration failed; it was rolled back.
    """
    names = pending()
    if not names:
        return
    if not migrate:
        raise StoreNeedsMigration(needs_migration(names))
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if pending():
                migrations.apply(Database(conn))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        raise StoreCorrupt(failed(exc)) from None
