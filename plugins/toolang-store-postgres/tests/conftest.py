"""A PostgreSQL server for the tests: ``$TOOLANG_PG_DSN`` or a throwaway cluster.

Without either the tests fail (they never skip): a skipped backend would look like a
passing one in CI.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest

from toolang_store_postgres.cluster import ENV_DSN, ClusterError, ThrowawayCluster
from toolang_store_postgres.store import PostgresStore


@pytest.fixture(scope="session")
def pg_dsn() -> Iterator[str]:
    if os.environ.get(ENV_DSN):
        yield os.environ[ENV_DSN]
        return
    cluster = ThrowawayCluster()
    try:
        dsn = cluster.start()
    except ClusterError as exc:
        pytest.fail(f"no PostgreSQL server for the toolang-store-postgres tests: {exc}")
    try:
        yield dsn
    finally:
        cluster.stop()


@pytest.fixture
def pg_schema(pg_dsn: str) -> Iterator[str]:
    """A schema name no other test uses; dropped afterwards."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    yield name
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


@pytest.fixture
def pg_store(pg_dsn: str, pg_schema: str) -> Callable[..., PostgresStore]:
    """``make(**kw)`` opens a new store object (a new pool) on the test's schema."""
    opened: list[PostgresStore] = []

    def make(**kw: object) -> PostgresStore:
        store = PostgresStore(pg_dsn, schema_name=pg_schema, **kw)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield make  # type: ignore[misc]
    for store in opened:
        store.close()
