"""Pytest fixtures for tests that need a PostgreSQL server (``pytest11`` entry point).

Loaded wherever toolang-store-postgres is installed; it imports nothing heavy and
defines no autouse fixture, so it changes no test suite that does not ask for them.

``toolang_pg_dsn`` (session)
    The server named by ``$TOOLANG_PG_DSN``, or else a throwaway cluster started for
    the session (``initdb`` + ``pg_ctl`` on a free port of 127.0.0.1). Without either
    the test fails with a message saying how to get one — it never skips: a skipped
    backend would look like a passing one in CI.
``toolang_pg_schema``
    A schema name no other test uses; dropped afterwards, with the schemas of
    plugins' databases made beside it (``<schema>__<plugin>``).
``toolang_pg_config``
    TOML sections (``[store]``, ``[plugins.store-postgres]``) that put a runtime's
    store, and plugins' databases, on the test's schema. Pass the plugin itself as
    ``store-postgres`` among the runtime's plugins.
``toolang_pg_store``
    ``make(**kw)`` opens a new store object (its own pool, as another process would)
    on the test's schema; every one is closed afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from toolang_store_postgres.store import PostgresStore


@pytest.fixture(scope="session")
def toolang_pg_dsn() -> Iterator[str]:
    from toolang_store_postgres.cluster import ENV_DSN, ClusterError, ThrowawayCluster

    if os.environ.get(ENV_DSN):
        yield os.environ[ENV_DSN]
        return
    cluster = ThrowawayCluster()
    try:
        dsn = cluster.start()
    except ClusterError as exc:
        pytest.fail(f"no PostgreSQL server for these tests: {exc}")
    try:
        yield dsn
    finally:
        cluster.stop()


@pytest.fixture
def toolang_pg_schema(toolang_pg_dsn: str) -> Iterator[str]:
    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    yield name
    with psycopg.connect(toolang_pg_dsn, autocommit=True) as conn:
        beside = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s", (f"{name}\\_\\_%",)
        ).fetchall()
        for schema in [name, *(row[0] for row in beside)]:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def toolang_pg_config(toolang_pg_dsn: str, toolang_pg_schema: str) -> str:
    return (
        f'[store]\nbackend = "postgres"\n\n[plugins.store-postgres]\n'
        f'dsn = "{toolang_pg_dsn}"\nschema = "{toolang_pg_schema}"\npool_size = 2\n'
    )


@pytest.fixture
def toolang_pg_store(
    toolang_pg_dsn: str, toolang_pg_schema: str
) -> Iterator[Callable[..., PostgresStore]]:
    from toolang_store_postgres.store import PostgresStore

    opened: list[PostgresStore] = []

    def make(**kw: Any) -> PostgresStore:
        store = PostgresStore(toolang_pg_dsn, schema_name=toolang_pg_schema, **kw)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
