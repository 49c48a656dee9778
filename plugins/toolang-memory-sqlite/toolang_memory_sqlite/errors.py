"""The plugin's failures: database errors turned into :class:`SQLiteMemoryError` naming
the operation and the file, and the last one remembered for ``health``."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType

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
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        self.message: str | None = None
        self.at: float | None = None

    def record(self, message: str) -> None:
        """Remember ``message`` as the last failure, now."""
        at = self._clock()
        with self._lock:
            self.message, self.at = message, at

    def guard(self, operation: str) -> _Guarded:
        """Turn a database failure into :class:`SQLiteMemoryError` (and text SQLite cannot
        encode into ``ValueError``), remembered for health."""
        return _Guarded(self, operation)


class _Guarded:
    """:meth:`Failures.guard` for one operation: a plain context manager (a recall and a
    write each enter a few; a generator-based one costs several times as much)."""

    __slots__ = ("_failures", "_operation")

    def __init__(self, failures: Failures, operation: str) -> None:
        self._failures = failures
        self._operation = operation

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc is None:
            return
        operation, failures = self._operation, self._failures
        if isinstance(exc, UnicodeEncodeError):  # a lone surrogate, e.g. from a bad JSON escape
            message = (
                f"{NAME}: {operation}: text with a lone surrogate ({exc.object[exc.start]!r} at "
                f"position {exc.start}) is not valid Unicode and cannot be stored or searched"
            )
            failures.record(message)
            raise ValueError(message) from None
        if isinstance(exc, sqlite3.Error | StoreError):
            message = f"{NAME}: {operation} on {failures.path} failed: {exc}"
            failures.record(message)
            raise SQLiteMemoryError(message) from exc
