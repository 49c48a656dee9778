"""A memory plugin's failures: database errors turned into the plugin's own error naming
the operation and the database, text that cannot be stored into ``ValueError``, and the
last failure remembered for ``health``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Final

from toolang_core.memory.types import MemoryHealth

DEGRADED_FOR_SECONDS: Final = 300.0
"""``health`` says ``degraded`` while the last failure is at most this old."""

Guard = Callable[[str], AbstractContextManager[None]]
""":meth:`Failures.guard`: ``with guard("remember"): …`` around a database operation."""


class Failures:
    """The most recent failure of one plugin's database, with its time (shared by every
    thread), and the guard that records and translates them.

    ``plugin`` starts every message (the plugin's entry-point name); ``where`` names the
    database in them (a file, or a server and schema with the password masked; a plugin
    may set it once it knows). Inside :meth:`guard`, an exception of ``database_errors``
    becomes ``error`` (the plugin's own, a ``RuntimeError``), and an ``error`` raised
    there is remembered as it passes.
    """

    def __init__(
        self,
        *,
        plugin: str,
        where: str,
        database_errors: tuple[type[BaseException], ...],
        error: type[Exception],
        clock: Callable[[], float],
    ) -> None:
        self.plugin = plugin
        self.where = where
        self.database_errors = database_errors
        self.error = error
        self._clock = clock
        self._lock = threading.Lock()
        self.message: str | None = None
        self.at: float | None = None

    def record(self, message: str) -> None:
        """Remember ``message`` as the last failure, now."""
        at = self._clock()
        with self._lock:
            self.message, self.at = message, at

    def guard(self, operation: str) -> Guarded:
        """``with guard("remember"): …``: a database failure becomes the plugin's error,
        text that is not valid Unicode ``ValueError``; either is remembered for health."""
        return Guarded(self, operation)

    def health(self, provider: str, detail: str, **values: Any) -> MemoryHealth:
        """``ok`` health, or ``degraded`` while the last failure is at most
        :data:`DEGRADED_FOR_SECONDS` old; ``values`` are :class:`MemoryHealth`'s others
        (``entries``, ``size_bytes``, ``meta``)."""
        recent = self.at is not None and self._clock() - self.at <= DEGRADED_FOR_SECONDS
        return self._health("degraded" if recent else "ok", provider, detail, values)

    def down(self, provider: str, exc: BaseException) -> MemoryHealth:
        """``down`` health: the database failed with ``exc``."""
        return self._health("down", provider, str(exc), {})

    def _health(
        self, status: Any, provider: str, detail: str, values: Mapping[str, Any]
    ) -> MemoryHealth:
        return MemoryHealth(
            status=status,
            provider=provider,
            detail=detail,
            last_error=self.message,
            last_error_at=self.at,
            **values,
        )


def health_after_pruning(
    failures: Failures,
    provider: str,
    *,
    prune: Callable[[], int],
    measure: Callable[[], tuple[str, int, int | None]],
    closed: tuple[type[BaseException], ...] = (),
) -> MemoryHealth:
    """A memory plugin's ``health``: ``prune()`` what expired (its failure, e.g. a lock
    held elsewhere, is kept as the last error and counts 0), then ``measure()`` — the
    detail, entries and size in bytes — in ``failures.guard("health")``: ``down`` when
    that fails with the plugin's error (or one of ``closed``), else ``ok`` or
    ``degraded`` (:meth:`Failures.health`) with ``meta`` ``{"pruned_expired": n}``."""
    try:
        try:
            pruned = prune()
        except failures.error:
            pruned = 0
        with failures.guard("health"):
            detail, entries, size = measure()
    except (failures.error, *closed) as exc:
        return failures.down(provider, exc)
    return failures.health(
        provider, detail, entries=entries, size_bytes=size, meta={"pruned_expired": pruned}
    )


class Guarded:
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
        if isinstance(exc, failures.error):  # the plugin's own, raised inside
            failures.record(str(exc))
            return
        if isinstance(exc, UnicodeEncodeError):  # a lone surrogate, e.g. from a bad JSON escape
            message = (
                f"{failures.plugin}: {operation}: text with a lone surrogate "
                f"({exc.object[exc.start]!r} at position {exc.start}) is not valid Unicode "
                "and cannot be stored or searched"
            )
            failures.record(message)
            raise ValueError(message) from None
        if isinstance(exc, failures.database_errors):
            failed = str(exc).strip()
            message = f"{failures.plugin}: {operation} on {failures.where} failed: {failed}"
            failures.record(message)
            raise failures.error(message) from exc
