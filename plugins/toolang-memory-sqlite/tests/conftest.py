"""Fixtures of the SQLite memory plugin's tests: a clock the test moves, and plugins on a
file of the test's own, closed after it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from toolang_core.testing.memory_calls import MemoryCaller, MemoryDriver
from toolang_memory_sqlite import MemorySQLiteSettings
from toolang_memory_sqlite.memory import SQLiteMemory

T0 = 1_800_000_000.0

# Hypothesis's time-based checks (a 200 ms deadline per example, "input generation is
# slow") fail when the machine is busy, and a combined run makes it busy; what these
# properties check does not depend on speed, so the suite turns both off.
settings.register_profile("toolang", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("toolang")


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def open_memory(tmp_path, clock):
    opened: list[SQLiteMemory] = []

    def make(path=None, **settings) -> MemoryDriver:
        plugin = SQLiteMemory(
            path or tmp_path / "memory.db", MemorySQLiteSettings(**settings), clock=clock
        )
        opened.append(plugin)
        return MemoryDriver(plugin, MemoryCaller())

    yield make
    for plugin in opened:
        plugin.close()


@pytest.fixture
def memory(open_memory):
    return open_memory()
