"""The plugin's failures: database errors turned into :class:`SQLiteMemoryError` naming
the operation and the file, and the last one remembered for ``health``."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from toolang_core import StoreError
from toolang_memory_sqlite.settings import NAME

Guard = Callable[[str], AbstractContextManager[None]]
""":meth:`Failures.guard`: ``with guard("remember"): …`` around a database operation."""


class SQLiteMemoryError(RuntimeError):
    """The database failed (locked, full, unreadable); the message names file and call."""


class Failures:
    """The most recent failure of one plugin's file, with its time (shared by every
    thread), and the guard that records and translates them."""

    def __init__(self, path: Path, clock: Callable[[], float]) -> None:
        self._path = path
        self._clock = clock
        self._lock = threading.Lock()
        self.message: str | None = None
        self.at: float | None = None

    def record(self, message: str) -> None:
        """Remember ``message`` as the last failure, now."""
        at = self._clock()
        with self._lock:
            self.message, self.at = message, at

    @contextmanager
    def guard(self, operation: str) -> Iterator[None]:
        """Turn a database failure into :class:`SQLiteMemoryError` (and text SQLite cannot
        encode into ``ValueError``), remembered for health."""
        try:
            yield
        except UnicodeEncodeError as exc:  # a lone surrogate, e.g. from a bad JSON escape
            message = (
                f"{NAME}: {operation}: text with a lone surrogate ({exc.object[exc.start]!r} at "
                f"position {exc.start}) is not valid Unicode and cannot be stored or searched"
            )
            self.record(message)
            raise ValueError(message) from None
        except (sqlite3.Error, StoreError) as exc:
            message = f"{NAME}: {operation} on {self._path} failed: {exc}"
            self.record(message)
            raise SQLiteMemoryError(message) from exc
