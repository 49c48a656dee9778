"""The plugin's failures: database errors turned into :class:`PostgresMemoryError` naming
the operation and the database, and the last one remembered for ``health``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType

import psycopg

from toolang_core import StoreError
from toolang_memory_postgres.settings import NAME


class PostgresMemoryError(RuntimeError):
    """The database failed (unreachable, locked, refused); the message names the call."""


class Failures:
    """The most recent failure, with its time (shared by every thread), and the guard
    that records and translates them. ``where`` names the database in messages (its
    server and schema, the password masked) once it is open."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self.where = f"the {NAME} database"
        self.message: str | None = None
        self.at: float | None = None

    def record(self, message: str) -> None:
        """Remember ``message`` as the last failure, now."""
        at = self._clock()
        with self._lock:
            self.message, self.at = message, at

    def guard(self, operation: str) -> Guarded:
        """``with guard("remember"): …``: a database failure becomes
        :class:`PostgresMemoryError`, text that is not valid Unicode ``ValueError``;
        either is remembered for health."""
        return Guarded(self, operation)


class Guarded:
    """:meth:`Failures.guard` for one operation."""

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
        if isinstance(exc, PostgresMemoryError):  # the plugin's own (semantic recall's)
            failures.record(str(exc))
            return
        if isinstance(exc, UnicodeEncodeError):  # a lone surrogate, e.g. from a bad JSON escape
            message = (
                f"{NAME}: {operation}: text with a lone surrogate ({exc.object[exc.start]!r} "
                f"at position {exc.start}) is not valid Unicode and cannot be stored or searched"
            )
            failures.record(message)
            raise ValueError(message) from None
        if isinstance(exc, psycopg.Error | StoreError):
            message = f"{NAME}: {operation} on {failures.where} failed: {str(exc).strip()}"
            failures.record(message)
            raise PostgresMemoryError(message) from exc
