"""The store's tables in one PostgreSQL schema, as numbered migrations with a version guard.

Never edit an applied migration: add a new one. A schema that has applied a migration
this list does not know was written by a newer toolang-store-postgres and is refused,
untouched. Read-only opens never migrate. Migrating runs in one transaction under an
advisory lock, so nodes starting together wait for each other and the last one finds
nothing left to do.

SQL text names the schema as ``{s}``; :class:`Names` fills it in (the schema name is
validated by the settings, so it is safe to splice into SQL).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import psycopg
from psycopg import errors as pg_errors

from toolang_core.store import StoreCorrupt, StoreMissing
from toolang_core.store.backend import TURN_COLUMNS, migrate_guarded, pending_migrations
from toolang_store_postgres.migrations import MIGRATIONS

MIGRATION_SET: Final = "toolang-store-postgres"
ACTIVE_SQL: Final = "('running', 'awaiting_approval', 'canceling')"


def lock_key(text: str) -> int:
    """A stable signed 32-bit advisory-lock key for ``text``."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big", signed=True)


class Names:
    """Everything named after one schema: SQL text, the notification channel, lock keys.

    Advisory locks take two keys: the first is a namespace per schema and purpose, the
    second the object (a group name's ``hashtext``, or a constant).
    """

    def __init__(self, schema: str) -> None:
        self.schema = schema
        self.s = f'"{schema}"'
        self.channel = f"toolang_{schema}"
        self.signal_channel = f"toolang_{schema}_turns"
        """Turn signals between runtimes (:mod:`toolang_store_postgres.signals`)."""
        self.admin_key = lock_key(f"toolang:{schema}")
        """Namespace for the presence lock (object 0) and the migration lock (object 1)."""
        self.run_key = lock_key(f"toolang-run:{schema}")
        """Namespace for group admission: claims of one capped group take turns."""
        self.queue_key = lock_key(f"toolang-queue:{schema}")
        """Namespace for group queues: submissions with ``max_queued`` take turns."""
        self._cache: dict[str, str] = {}

    def __call__(self, template: str) -> str:
        """``template`` with ``{s}`` (the quoted schema), ``{active}`` and ``{columns}``."""
        sql = self._cache.get(template)
        if sql is None:
            sql = self._cache[template] = template.format(
                s=self.s,
                active=ACTIVE_SQL,
                columns=TURN_COLUMNS,
                run_key=self.run_key,
            )
        return sql


LEDGER: Final = """
CREATE TABLE IF NOT EXISTS {s}.toolang_migrations (
    migration_set text NOT NULL,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (migration_set, name)
)
"""


def prepare(conn: psycopg.Connection[Any], names: Names, where: str, *, migrate: bool) -> None:
    """Refuse a newer or foreign schema; apply pending migrations when ``migrate``
    (toolang-core's guarded procedure, :func:`toolang_core.store.backend.migrate_guarded`).

    ``where`` describes the store in messages (with the password masked).

    :raises StoreMissing: read-only and there is no toolang schema yet.
    :raises StoreSchemaTooNew: the schema has migrations this plugin does not know.
    :raises StoreNeedsMigration: read-only and migrations are pending.
    :raises StoreCorrupt: the schema holds tables but is not a toolang store, or a
        migration failed (it was rolled back).
    """
    migrate_guarded(
        where=where,
        migration_set=MIGRATION_SET,
        pending=lambda: _pending(conn, names, where, creating=migrate),
        migrate=migrate,
        transaction=lambda: _migrating(conn, names),
        apply=lambda name: _apply(conn, names, name),
        errors=(pg_errors.ProgrammingError, pg_errors.DataError, pg_errors.IntegrityError),
    )


@contextmanager
def _migrating(conn: psycopg.Connection[Any], names: Names) -> Iterator[None]:
    with conn.transaction():
        # One node migrates at a time; the others wait here and then find nothing to do.
        conn.execute("SELECT pg_advisory_xact_lock(%s, 1)", (names.admin_key,))
        exists = conn.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = %s", (names.schema,)
        ).fetchone()
        if not exists:
            conn.execute(names("CREATE SCHEMA {s}"))
        conn.execute(names(LEDGER))
        yield


def _apply(conn: psycopg.Connection[Any], names: Names, name: str) -> None:
    conn.execute(names(dict(MIGRATIONS)[name]))
    conn.execute(
        names("INSERT INTO {s}.toolang_migrations (migration_set, name) VALUES (%s, %s)"),
        (MIGRATION_SET, name),
    )


def _pending(
    conn: psycopg.Connection[Any], names: Names, where: str, *, creating: bool
) -> list[str]:
    known = [name for name, _ in MIGRATIONS]
    # One statement, so one snapshot: another node's migration (the ledger and the tables
    # in one transaction) is either wholly visible or not at all.
    tables = [
        row[0]
        for row in conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY c.relname",
            (names.schema,),
        )
    ]
    if "toolang_migrations" not in tables:
        if tables:
            raise StoreCorrupt(
                f"{where}: schema {names.schema!r} holds tables ({', '.join(tables[:5])}) but "
                "is not a toolang store; it was left untouched — choose another "
                "[plugins.store-postgres] schema"
            )
        if not creating:
            raise StoreMissing(f"no execution store at {where} yet; `toolang run` creates it")
        return known
    applied = [
        row[0]
        for row in conn.execute(
            names("SELECT name FROM {s}.toolang_migrations WHERE migration_set = %s ORDER BY name"),
            (MIGRATION_SET,),
        )
    ]
    return pending_migrations(
        known, applied, where=where, migration_set=MIGRATION_SET, upgrade="toolang-store-postgres"
    )
