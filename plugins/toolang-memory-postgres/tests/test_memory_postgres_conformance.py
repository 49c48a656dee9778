"""toolang-memory-postgres passes the memory conformance suite on a real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

from toolang_core.testing.embeddings import ConceptEmbedder
from toolang_core.testing.memory_conformance import MemoryConformance
from toolang_memory_postgres.schema import ENTRIES


class TestPostgresMemoryConforms(MemoryConformance):
    tracks_uses = True

    @pytest.fixture
    def toolang_memory_factory(self, memory_factory, toolang_pg_dsn, entries_schema):
        self.dsn, self.schema = toolang_pg_dsn, entries_schema
        # A short lock timeout, so the provoked failure (a table locked by another
        # session) fails fast instead of waiting the default ten seconds.
        return lambda: memory_factory(lock_timeout_seconds=0.1)

    @contextmanager
    def failing(self, plugin) -> Iterator[None]:
        """Another session holds the entries table locked (as a long migration would)."""
        with psycopg.connect(self.dsn) as other:
            other.execute(f'LOCK TABLE "{self.schema}".{ENTRIES} IN ACCESS EXCLUSIVE MODE')
            try:
                yield
            finally:
                other.rollback()


class TestPostgresMemoryConformsWithSemanticRecall(TestPostgresMemoryConforms):
    """The same suite, unchanged, with semantic recall on (pgvector, a deterministic
    embedding model): similarity never breaks scoping, forgetting, TTLs or write order."""

    @pytest.fixture
    def toolang_pg_dsn(self, toolang_pgvector_dsn: str) -> str:
        """On the server with pgvector (see conftest.py)."""
        return toolang_pgvector_dsn

    @pytest.fixture
    def toolang_memory_factory(self, memory_factory, toolang_pg_dsn, entries_schema):
        self.dsn, self.schema = toolang_pg_dsn, entries_schema
        embedder = ConceptEmbedder()
        return lambda: memory_factory(
            embedder=embedder,
            semantic=True,
            embedding_model="concepts",
            lock_timeout_seconds=0.1,
        )
