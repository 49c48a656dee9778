"""toolang-memory-sqlite passes the memory conformance suite, in both of its locations."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from toolang_core import Runtime, ToolangConfig
from toolang_core.testing.memory_conformance import MemoryConformance
from toolang_memory_sqlite import MemorySQLiteSettings
from toolang_memory_sqlite.memory import SQLiteMemory

# A short busy timeout, so the provoked failure (a file locked by another writer)
# fails fast instead of waiting the default ten seconds.
SETTINGS = MemorySQLiteSettings(busy_timeout_seconds=0.05)


@contextmanager
def locked(path) -> Iterator[None]:
    """Another connection holds the write lock of ``path`` (as a busy store would)."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


class TestOwnFileConforms(MemoryConformance):
    tracks_uses = True

    @pytest.fixture
    def toolang_memory_factory(self, tmp_path):
        return lambda: SQLiteMemory(tmp_path / "plugins" / "memory-sqlite.db", SETTINGS)

    def failing(self, plugin):
        return locked(plugin.path)


class TestStoreFileConforms(MemoryConformance):
    """``database = "store"``: the entries share the execution store's file."""

    tracks_uses = True

    @pytest.fixture
    def toolang_memory_factory(self, tmp_path):
        config = ToolangConfig(base_dir=tmp_path, home=tmp_path / "home")
        Runtime.with_plugins(config, env={}).open_store().close()  # the store made the file
        return lambda: SQLiteMemory(config.store_path, SETTINGS, shared_with_store=True)

    def failing(self, plugin):
        return locked(plugin.path)
