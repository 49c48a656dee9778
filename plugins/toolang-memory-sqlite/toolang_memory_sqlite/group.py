"""Grouped calls: the writes (or recalls) of concurrent callers on one event loop, together.

When a turn ends the runtime remembers its exchange; many turns end at about the same
time. Each write alone is a transaction and a hop to the database thread. Here a write
waits while the one before it is being written, and every write that arrived meanwhile
goes into the next group: one hop, one transaction for the group. A write returns once
its group is committed, so it is as durable as a write of its own.

Recalls are grouped the same way: many turns start at about the same time, and each
recall alone is a hop to the database thread and back — the event loop woken once per
recall, each turn going on alone. A group is one hop, and its turns go on together.
A call that finds nothing under way starts on the event loop's next round, with the
calls made in the same round: a lone caller waits for nobody (and handing each call
over at once would send the first of a round alone, doubling the hand-overs).

A group of one call — nothing else under way, no other call in its round, and a
round that took less than :data:`QUIET_ROUND`: a quiet runtime, one turn at a time —
may be done at once in the loop's thread instead (``alone``): the hop to the thread
and the loop's wake-up back cost more than such a call's own work, and nothing else is
waiting for the loop meanwhile. Under load calls come in groups (or a round is long:
the loop has other work), and the thread does them beside the loop.

A group holds at most :data:`GROUP_MOST` calls; the others wait for the next one,
handed to the thread as soon as this one's results are back — before the loop runs its
callers on. The bound is there for runtimes running many turns at once (``max_running``
in the hundreds), so that no turn waits on a very large group's last call; it is above
the default 8 turns running, because on a quiet machine one hand-over for every call
waiting costs less than several smaller ones (below).
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Callable, Sequence
from typing import Final, Generic, TypeVar

from toolang_memory_sqlite.dbthread import DatabaseThread

QUIET_ROUND: Final = 0.0003
"""Seconds: a lone call whose round of the event loop took longer goes to the thread
(the loop had other callbacks to run; the thread's SQL would run beside them)."""

GROUP_MOST: Final = 64
"""Calls in one group at most. Measured on ``bench/agent_turns.py --shape both`` (200
threads, 8 turns running) on a quiet 2-core machine, four interleaved rounds: against
groups of at most 4 (this bound's earlier value, chosen on a loaded machine), groups of
every call waiting did 7-9 % more turns per second with memory on in both shapes, at
about 0.1 ms less CPU per turn (burst 940 -> 1,025 turns/s, ordered 845 -> 900)."""

Item = TypeVar("Item")
Result = TypeVar("Result")


class _Queue(Generic[Item, Result]):
    """The calls waiting on one event loop, and whether a group is under way."""

    def __init__(self) -> None:
        self.waiting: list[tuple[Item, asyncio.Future[Result]]] = []
        self.busy = False


class GroupCalls(Generic[Item, Result]):
    """Hands ``call`` the items of concurrent :meth:`add` calls as one group, in the
    thread ``thread()`` gives; ``call`` returns one result or exception per item, in
    order (an exception it raises fails the whole group).

    Plain callbacks, not a task per group: the first call of a group hands it over on
    the event loop's next round, and its results come back with one wake-up of the
    loop, which hands the next group (if any) to the thread at once. A group done at
    once is done when its first call hands it over: that call returns without waiting
    for another round."""

    def __init__(
        self,
        call: Callable[[Sequence[Item]], list[Result | Exception]],
        thread: Callable[[], DatabaseThread],
        alone: Callable[[Sequence[Item]], list[Result | Exception] | None] | None = None,
        *,
        most: int = GROUP_MOST,
    ) -> None:
        """``alone(items)`` does a group of one in the loop's thread, or returns
        ``None`` to leave it to ``call`` in the thread. ``most``: calls in one group
        at most (at least 1)."""
        if most < 1:
            raise ValueError(f"memory-sqlite: a group holds at least 1 call, not {most}")
        self._most = most
        self._call = call
        self._thread = thread
        self._alone = alone
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Queue[Item, Result]] = (
            weakref.WeakKeyDictionary()
        )

    async def add(self, item: Item) -> Result:
        """Hand in ``item`` with the others waiting; return its result once its group is done."""
        loop = asyncio.get_running_loop()
        queue = self._queues.get(loop)
        if queue is None:
            queue = self._queues[loop] = _Queue()
        future: asyncio.Future[Result] = loop.create_future()
        queue.waiting.append((item, future))
        if not queue.busy:
            queue.busy = True
            started = loop.time()
            try:  # one round of the loop: the calls made in it join this group
                await asyncio.sleep(0)
            finally:  # (handed over even if this caller gave up meanwhile)
                self._hand_over(loop, queue, quiet=loop.time() - started < QUIET_ROUND)
        return await future  # done already when the group was done at once (alone)

    def _hand_over(
        self, loop: asyncio.AbstractEventLoop, queue: _Queue[Item, Result], *, quiet: bool = False
    ) -> None:
        """Give the first ``most`` waiting calls to the thread as one group (in the
        loop's thread; the others go when it is done); a lone call on a ``quiet`` loop
        may be done at once instead (``alone``)."""
        waiting = queue.waiting
        group, queue.waiting = waiting[: self._most], waiting[self._most :]
        if not group:
            queue.busy = False
            return
        items = [i for i, _ in group]
        if quiet and len(items) == 1 and self._alone is not None:
            try:
                done = self._alone(items)
            except Exception as exc:
                done = [exc]
            if done is not None:
                self._settle(loop, queue, group, done)
                return

        def job() -> None:  # in the database thread
            try:
                outcomes = self._call(items)
            except BaseException as exc:  # whatever it is, the callers hear of it
                outcomes = [exc if isinstance(exc, Exception) else _failed(exc)] * len(group)
            # A loop closed meanwhile has nobody waiting any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._settle, loop, queue, group, outcomes)

        try:
            self._thread().post(job)
        except Exception as exc:  # e.g. the plugin was closed: the group fails
            self._settle(loop, queue, group, [exc] * len(group))

    def _settle(
        self,
        loop: asyncio.AbstractEventLoop,
        queue: _Queue[Item, Result],
        group: list[tuple[Item, asyncio.Future[Result]]],
        outcomes: list[Result | Exception],
    ) -> None:
        """Hand each caller of ``group`` its outcome, then the next group over — even
        when ``call`` answered the wrong number of outcomes (those left without one
        fail): a group that never settled would leave every later call waiting."""
        try:
            if len(outcomes) != len(group):
                missing = RuntimeError(
                    f"memory-sqlite: {len(outcomes)} outcomes for a group of {len(group)} calls"
                )
                outcomes = [missing] * len(group)
            for (_, future), outcome in zip(group, outcomes, strict=True):
                if future.done():  # its caller gave up waiting (a timeout)
                    continue
                if isinstance(outcome, Exception):
                    future.set_exception(outcome)
                else:
                    future.set_result(outcome)
        finally:
            self._hand_over(loop, queue)


def _failed(exc: BaseException) -> Exception:
    """What the callers of a group hear when the database thread's call ended in a
    ``BaseException`` (e.g. ``SystemExit``) rather than an ``Exception``."""
    return RuntimeError(f"memory-sqlite: the database thread's call ended in {exc!r}")
