"""The execution-store contract, against a real PostgreSQL server."""

from __future__ import annotations

import pytest

from toolang_core.testing.store_conformance import StoreConformance
from toolang_store_postgres.store import PostgresStore


class TestPostgresStore(StoreConformance):
    @pytest.fixture
    def toolang_store_factory(self, toolang_pg_dsn, toolang_pg_schema):
        return lambda: PostgresStore(toolang_pg_dsn, schema_name=toolang_pg_schema, pool_size=2)
