"""The memory conformance suite holds for a plugin that is nothing like SQLite.

``ListMemory`` (tests/memory_helpers.py) keeps entries in a list and matches words as
substrings; every method is ``async``, so this also checks that the suite awaits what
needs awaiting.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from toolang_core.testing.list_memory import ListMemory, Shelf
from toolang_core.testing.memory_conformance import MemoryConformance


class TestAListPluginWithAsyncMethodsConforms(MemoryConformance):
    tracks_uses = True
    ttl_seconds = 0.05

    @pytest.fixture
    def toolang_memory_factory(self):
        shelf = Shelf()
        return lambda: ListMemory(shelf)

    @contextmanager
    def failing(self, plugin: ListMemory) -> Iterator[None]:
        plugin.fail_next = True
        yield
