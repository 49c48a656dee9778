"""A plugin's schema migrated by toolang-core's guarded procedure, under an advisory lock.

The ledger is the store's (``toolang_migrations`` in the plugin's schema, keyed by the
set's name). Nodes starting together take turns on a transaction-scoped advisory lock
named after the schema; the last finds nothing pending. A schema with a migration the
plugin does not know (a newer version wrote it), or with tables but no ledger, is
refused untouched; a read-only open never creates or migrates.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import errors as pg_errors

from toolang_core.store import StoreCorrupt, StoreMissing
from toolang_core.store.backend import migrate_guarded, pending_migrations
from toolang_store_postgres.schema import lock_key

if TYPE_CHECKING:
    from toolang_core import PluginMigrations
    from toolang_store_postgres.plugin_tables import PostgresPluginDatabase

LEDGER = """
CREATE TABLE IF NOT EXISTS "{schema}".toolang_migrations (
    migration_set text NOT NULL,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (migration_set, name)
)
"""


def migration_lock(schema: str) -> tuple[int, int]:
    """The advisory lock (two keys) nodes migrating ``schema`` take turns on."""
    return lock_key(f"toolang-plugin:{schema}"), 1


def prepare_plugin_schema(
    db: PostgresPluginDatabase, migrations: PluginMigrations, *, migrate: bool
) -> list[str]:
    """Refuse a newer or foreign schema; apply pending migrations when ``migrate``.
    Returns the names applied.

    :raises StoreMissing: read-only and the plugin has no schema yet.
    :raises StoreSchemaTooNew: the schema has migrations the plugin does not know.
    :raises StoreNeedsMigration: read-only and migrations are pending.
    :raises StoreCorrupt: the schema holds other tables, or a migration failed (rolled
        back whole).
    """
    with db.checkout() as conn:
        where = f"plugin {db.plugin!r}'s database at {db.where}"
        return migrate_guarded(
            where=where,
            migration_set=migrations.name,
            pending=lambda: _pending(conn, db, migrations, where, creating=migrate),
            migrate=migrate,
            transaction=lambda: _migrating(conn, db),
            apply=lambda name: _apply(conn, db, migrations, name),
            errors=(pg_errors.ProgrammingError, pg_errors.DataError, pg_errors.IntegrityError),
        )


@contextmanager
def _migrating(conn: psycopg.Connection[Any], db: PostgresPluginDatabase) -> Iterator[None]:
    with conn.transaction():
        # One node migrates at a time; the others wait here and then find nothing to do.
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", migration_lock(db.schema))
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{db.schema}"')
        conn.execute(LEDGER.format(schema=db.schema))
        with db.bound(conn):
            yield


def _apply(
    conn: psycopg.Connection[Any],
    db: PostgresPluginDatabase,
    migrations: PluginMigrations,
    name: str,
) -> None:
    migrations.step(name)(db)
    conn.execute(
        f'INSERT INTO "{db.schema}".toolang_migrations (migration_set, name) VALUES (%s, %s)',
        (migrations.name, name),
    )


def _pending(
    conn: psycopg.Connection[Any],
    db: PostgresPluginDatabase,
    migrations: PluginMigrations,
    where: str,
    *,
    creating: bool,
) -> list[str]:
    # One statement, so one snapshot: another node's migration (ledger and tables in one
    # transaction) is wholly visible or not at all.
    tables = [
        row[0]
        for row in conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY c.relname",
            (db.schema,),
        )
    ]
    if "toolang_migrations" not in tables:
        if tables:
            raise StoreCorrupt(
                f"{where}: schema {db.schema!r} holds tables ({', '.join(tables[:5])}) but no "
                "toolang migrations; it was left untouched"
            )
        if not creating:
            raise StoreMissing(
                f"no database of plugin {db.plugin!r} at {db.where} yet; it is created the "
                "first time the plugin writes (e.g. while `toolang run` serves)"
            )
        return migrations.names
    applied = [
        row[0]
        for row in conn.execute(
            f'SELECT name FROM "{db.schema}".toolang_migrations WHERE migration_set = %s '
            "ORDER BY applied_at, name",
            (migrations.name,),
        )
    ]
    return pending_migrations(
        migrations.names,
        applied,
        where=where,
        migration_set=migrations.name,
        upgrade=f"the plugin {db.plugin!r}",
    )
