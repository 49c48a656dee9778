"""Fixtures of the PostgreSQL memory plugin's tests: plugins on a schema of the test's
own on the throwaway server (toolang-store-postgres's pytest plugin)."""

from __future__ import annotations

import psycopg
import pytest

from toolang_memory_postgres import NAME, MemoryPostgresSettings
from toolang_memory_postgres.memory import PostgresMemory
from toolang_memory_postgres.schema import MIGRATIONS
from toolang_store_postgres.plugin_tables import PostgresPluginDatabases, plugin_schema


@pytest.fixture
def memory_factory(toolang_pg_dsn, toolang_pg_schema):
    """``make(**settings)``: a new plugin object over the test's schema (as another
    process or node would open it); each is closed after the test."""
    databases = PostgresPluginDatabases(toolang_pg_dsn, store_schema=toolang_pg_schema)
    opened: list[PostgresMemory] = []

    def make(clock=None, **settings) -> PostgresMemory:
        extra = {} if clock is None else {"clock": clock}
        plugin = PostgresMemory(
            lambda: databases.open(NAME, MIGRATIONS), MemoryPostgresSettings(**settings), **extra
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
