"""One sink's bounded queue and the background task that drains it.

Offering an event never waits: it appends to a deque (dropping the oldest event when
the queue is full) and wakes the worker. Each sink has its own outlet, so a webhook
that is down never holds back the JSON-lines file.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import TYPE_CHECKING

import attrs
import structlog

from toolang_core import redact_text
from toolang_hook_event_publisher.sinks import DeliveryError, Record, Send, Sink

if TYPE_CHECKING:
    from collections.abc import Collection

log = structlog.get_logger("toolang.event_publisher")

_CANCEL_WAIT_SECONDS = 2.0


@attrs.define
class SinkStats:
    """What became of the events offered to one sink.

    ``delivered`` got through; ``dropped`` were pushed out of a full queue;
    ``failed`` were given up on by the sink (e.g. after every webhook retry);
    ``undelivered`` were still queued or in flight when the runtime shut down.
    """

    delivered: int = 0
    dropped: int = 0
    failed: int = 0
    undelivered: int = 0

    @property
    def lost(self) -> int:
        return self.dropped + self.failed + self.undelivered


class Outlet:
    """A sink, the kinds it takes, its queue and its worker."""

    def __init__(self, label: str, sink: Sink, kinds: Collection[str], capacity: int) -> None:
        self.label = label
        self.sink = sink
        self.kinds = tuple(kinds)
        self.capacity = capacity
        self.stats = SinkStats()
        self.queue: deque[Record] = deque()
        self._in_flight = 0
        self._overflowing = False
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()

    @property
    def pending(self) -> int:
        """Events queued or being delivered right now."""
        return len(self.queue) + self._in_flight

    def offer(self, record: Record) -> None:
        """Queue ``record`` for delivery; never waits. Call from the event loop."""
        if len(self.queue) >= self.capacity:
            self.queue.popleft()
            self.stats.dropped += 1
            if not self._overflowing:  # one warning per overflow, not one per event
                self._overflowing = True
                log.warning(
                    "event_publisher.queue_full",
                    sink=self.label,
                    queue_size=self.capacity,
                    dropped_so_far=self.stats.dropped,
                    hint="the sink is slower than the events; older events are being dropped",
                )
        self.queue.append(record)
        self._ensure_worker()
        self._idle.clear()
        self._wake.set()

    def _ensure_worker(self) -> None:
        loop = asyncio.get_running_loop()
        task = self._task
        if task is not None and not task.done() and task.get_loop() is loop:
            return
        # A new event loop (each asyncio.run) needs its own events and task; whatever a
        # previous loop left queued is delivered by the new worker.
        self._wake, self._idle = asyncio.Event(), asyncio.Event()
        self._task = loop.create_task(self._work(), name=f"event-publisher {self.label}")

    async def _work(self) -> None:
        try:
            async with self.sink.session() as send:
                while True:
                    if not self.queue:
                        self._overflowing = False
                        self._idle.set()
                        await self._wake.wait()
                        self._wake.clear()
                        continue
                    size = min(len(self.queue), self.sink.batch_size)
                    batch = [self.queue.popleft() for _ in range(size)]
                    self._in_flight = size
                    try:
                        await self._deliver(send, batch)
                    finally:
                        self._in_flight = 0
        except Exception as exc:  # opening the session failed: the next offer retries
            log.warning(
                "event_publisher.sink_failed",
                sink=self.label,
                error=redact_text(f"{type(exc).__name__}: {exc}"),
            )
            self._idle.set()

    async def _deliver(self, send: Send, batch: list[Record]) -> None:
        try:
            await send(batch)
        except DeliveryError as exc:
            self.stats.delivered += exc.delivered
            self.stats.failed += len(batch) - exc.delivered
            log.warning(
                "event_publisher.delivery_failed",
                sink=self.label,
                events=len(batch) - exc.delivered,
                error=str(exc),
            )
        except Exception as exc:
            self.stats.failed += len(batch)
            log.warning(
                "event_publisher.delivery_failed",
                sink=self.label,
                events=len(batch),
                error=redact_text(f"{type(exc).__name__}: {exc}"),
            )
        else:
            self.stats.delivered += len(batch)

    async def flush(self, deadline: float) -> None:
        """Wait until everything queued is delivered or the loop's clock passes ``deadline``."""
        if not self.pending:
            return
        self._ensure_worker()
        remaining = deadline - asyncio.get_running_loop().time()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), max(0.0, remaining))

    async def close(self) -> int:
        """Stop the worker; count and forget what it did not deliver. Returns that count."""
        undelivered = self.pending
        self.stats.undelivered += undelivered
        self.queue.clear()
        task, self._task = self._task, None
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            task.cancel()
            await asyncio.wait({task}, timeout=_CANCEL_WAIT_SECONDS)
        self._in_flight = 0
        return undelivered
