"""Write rows in batches: one transaction per batch, never one per tool call.

A plain INSERT per call costs about as much as the whole tool-call chain (tens of µs
with WAL); appending to a list costs well under one. Rows wait here and are written
when ``batch_size`` of them wait, at the latest ``flush_seconds`` after the first one
arrived (a timer on the running event loop), and whenever the owner calls
:meth:`BatchWriter.flush` (e.g. at ``toolang_shutdown``). A process killed in between
loses at most those few seconds of rows: use it for statistics and records that may be
lost, never for the execution store's own state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import structlog

log = structlog.get_logger("toolang.batch")

Row = TypeVar("Row")


class BatchWriter(Generic[Row]):
    """Collects rows and hands them to ``write`` in batches; see the module docstring.

    ``name`` labels the log event of a batch that could not be written (the plugin's
    name is a good one).
    """

    def __init__(
        self,
        write: Callable[[Sequence[Row]], None],
        *,
        flush_seconds: float,
        batch_size: int,
        name: str = "batch",
    ) -> None:
        self._write = write
        self._flush_seconds = flush_seconds
        self._batch_size = batch_size
        self._name = name
        self._rows: list[Row] = []
        self._timer: asyncio.TimerHandle | None = None

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, row: Row) -> None:
        """Queue ``row``; write the batch now if it is full or nothing will flush it later."""
        self._rows.append(row)
        if len(self._rows) >= self._batch_size or self._flush_seconds <= 0:
            self.flush()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # called outside an event loop: no timer can fire
                self.flush()
                return
            self._timer = loop.call_later(self._flush_seconds, self.flush)

    def flush(self) -> int:
        """Write every waiting row; return how many were written.

        Never raises: a batch that cannot be written is logged with its size and the
        error and dropped (memory must not grow without bound while the disk refuses).
        """
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        rows, self._rows = self._rows, []
        if not rows:
            return 0
        try:
            self._write(rows)
        except Exception as exc:
            log.warning(
                "batch.write_failed",
                writer=self._name,
                dropped=len(rows),
                error=f"{type(exc).__name__}: {exc}",
            )
            return 0
        return len(rows)
