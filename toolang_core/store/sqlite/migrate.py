"""Guarded migrations of an SQLite file: :func:`toolang_core.store.migrations.migrate_guarded`
for the store and plugins' databases (:mod:`toolang_core.store.plugin_db`).

Reading what a file has applied fails as :class:`StoreCorrupt` without changing it;
pending migrations are applied inside one ``BEGIN IMMEDIATE`` transaction (sqlite-utils
nests each in a savepoint), one at a time so that a failure names its migration.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlite_utils import Database, Migrations

from toolang_core.store.errors import StoreCorrupt
from toolang_core.store.migrations import migrate_guarded


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


def known_migrations(migrations: Migrations) -> list[str]:
    """The names of every migration of the set, in order (read off an empty database)."""
    return [m.name for m in migrations.pending(Database(memory=True))]


def migrate_file(
    conn: sqlite3.Connection,
    path: Path,
    migrations: Migrations,
    *,
    pending: Callable[[], list[str]],
    migrate: bool,
) -> list[str]:
    """Apply the set's ``pending()`` migrations to the file at ``path`` when ``migrate``.

    :raises StoreNeedsMigration: migrations are pending and ``migrate`` is false.
    :raises StoreCorrupt: a migration failed; it was rolled back.
    """
    return migrate_guarded(
        where=str(path),
        migration_set=migrations.name,
        known=known_migrations(migrations),
        pending=pending,
        migrate=migrate,
        transaction=lambda: _immediate(conn),
        apply=lambda name: _apply_one(conn, migrations, name),
        errors=(sqlite3.DatabaseError,),
    )


@contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _apply_one(conn: sqlite3.Connection, migrations: Migrations, name: str) -> None:
    """Apply the pending migration ``name`` (the first pending one) and no other."""
    db = Database(conn)
    pending = [m.name for m in migrations.pending(db)]
    migrations.apply(db, stop_before=pending[pending.index(name) + 1 :])
