"""The execution-store contract, against a real PostgreSQL server."""

from __future__ import annotations

import pytest

from toolang_core.testing.store_conformance import StoreConformance
from toolang_store_postgres.store import PostgresStore


class TestPostgresStore(StoreConformance):
    @pytest.fixture
    def toolang_store_factory(self, pg_dsn, pg_schema):
        return lambda: PostgresStore(pg_dsn, schema_name=pg_schema, pool_size=2)
