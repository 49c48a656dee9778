"""The plugin's failures: database errors turned into :class:`SQLiteMemoryError` naming
the operation and the file, and the last one remembered for ``health``
(:class:`toolang_core.memory.kit.Failures`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from toolang_core import StoreError
from toolang_core.memory.kit import Failures, Guard
from toolang_memory_sqlite.settings import NAME

__all__ = ["Failures", "Guard", "SQLiteMemoryError", "failures"]


class SQLiteMemoryError(RuntimeError):
    """The database failed (locked, full, unreadable); the message names file and call."""


def failures(path: Path, clock: Callable[[], float]) -> Failures:
    """The failures of the plugin's file at ``path``: SQLite's errors (and the store's,
    sharing its file) become :class:`SQLiteMemoryError`."""
    return Failures(
        plugin=NAME,
        where=str(path),
        database_errors=(sqlite3.Error, StoreError),
        error=SQLiteMemoryError,
        clock=clock,
    )
