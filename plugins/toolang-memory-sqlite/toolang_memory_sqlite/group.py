"""Grouped calls: the writes and recalls of concurrent callers on one event loop, together.

When a turn ends the runtime remembers its exchange; many turns end at about the same
time, and each write alone would be a transaction of its own. Here a call that finds
nothing under way waits for the event loop's next round, and every call made
meanwhile goes into its group: one transaction for the group's writes. A write
returns once its group is committed, so it is as durable as a write of its own. A
lone caller waits for nobody; calls made while a group is in the thread (below) go
into the next group, done as soon as that one's results are back.

A group is done at once in the loop's thread when it can be (``at_once``): what it
leaves undone, a call that could wait (see
:meth:`~toolang_memory_sqlite.memory.SQLiteMemory._at_once`), goes to the thread,
which waits. Handing SQL to a thread looks like parallel work, but only SQLite's own
steps run beside the loop: the rest of a recall or a write (building statements,
ranking, making items) is Python, which waits for the interpreter's lock while the
loop holds it. Under load the two threads hand that lock back and forth at every
statement, and each hand-over costs both of them: a recall measured alone took 0.29
ms of CPU, 2.0 ms beside a busy Python thread; on ``bench/agent_turns.py`` (memory on,
ordered conversations, 2 cores, nine interleaved pairs) a turn took 3.41 ms of CPU
with its memory calls done at once against 3.85 ms in the thread. Done at once, a
group holds the loop for its own bounded work only.

A group holds at most :data:`GROUP_MOST` calls; the others wait for the next one:
handed to the thread as soon as this one's results are back from it (before the loop
runs its callers on), or done on the loop's next round after this one was done at once
(its callers run first). The bound is there
for runtimes running many turns at once (``max_running`` in the hundreds), so that no
turn waits on a very large group's last call (nor the loop on a very large group done
at once); it is above
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

GROUP_MOST: Final = 64
"""Calls in one group at most. Measured on ``bench/agent_turns.py --shape both`` (200
threads, 8 turns running) on a quiet 2-core machine, four interleaved rounds: against
groups of at most 4 (this bound's earlier value, chosen on a loaded machine), groups of
every call waiting did 7-9 % more turns per second with memory on in both shapes, at
about 0.1 ms less CPU per turn (burst 940 -> 1,025 turns/s, ordered 845 -> 900)."""

Item = TypeVar("Item")
Result = TypeVar("Result")


class Left:
    """What ``at_once`` answers for a call it leaves to the thread (:data:`LEFT`)."""

    def __repr__(self) -> str:
        return "LEFT"


LEFT: Final = Left()


class _Queue(Generic[Item, Result]):
    """The calls waiting on one event loop, and whether a group is under way."""

    def __init__(self) -> None:
        self.waiting: list[tuple[Item, asyncio.Future[Result]]] = []
        self.busy = False


class GroupCalls(Generic[Item, Result]):
    """Hands the items of concurrent :meth:`add` calls over as one group: to
    ``at_once`` in the loop's thread, then what it left (or all of them, without it) to
    ``call`` in the thread ``thread()`` gives. Each returns one result or exception per
    item, in order (an exception either raises fails the items it was given);
    ``at_once`` answers :data:`LEFT` for an item it leaves.

    Plain callbacks, not a task per group: the first call of a group hands it over on
    the event loop's next round, and the thread's results come back with one wake-up
    of the loop, which hands the next group (if any) over at once. A group done at once
    is done when its first call hands it over (that call returns without waiting for
    another round); the next group, if calls wait, goes on the loop's next round."""

    def __init__(
        self,
        call: Callable[[Sequence[Item]], list[Result | Exception]],
        thread: Callable[[], DatabaseThread],
        at_once: Callable[[Sequence[Item]], list[Result | Exception | Left]] | None = None,
        *,
        most: int = GROUP_MOST,
    ) -> None:
        """``most``: calls in one group at most (at least 1)."""
        if most < 1:
            raise ValueError(f"memory-sqlite: a group holds at least 1 call, not {most}")
        self._most = most
        self._call = call
        self._thread = thread
        self._at_once = at_once
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
            try:  # one round of the loop: the calls made in it join this group
                await asyncio.sleep(0)
            finally:  # (handed over even if this caller gave up meanwhile)
                self._hand_over(loop, queue)
        return await future  # done already when the group was done at once

    def _hand_over(self, loop: asyncio.AbstractEventLoop, queue: _Queue[Item, Result]) -> None:
        """Do the first ``most`` waiting calls as one group (in the loop's thread): at
        once what ``at_once`` can, the rest in the thread (the next group goes when
        they are done)."""
        waiting = queue.waiting
        group, queue.waiting = waiting[: self._most], waiting[self._most :]
        if not group:
            queue.busy = False
            return
        if self._at_once is not None:
            try:
                done = self._at_once([i for i, _ in group])
            except Exception as exc:
                done = [exc] * len(group)
            if len(done) != len(group):
                done = [_miscounted(len(done), len(group))] * len(group)
            left = [c for c, o in zip(group, done, strict=True) if isinstance(o, Left)]
            answered = [(c, o) for c, o in zip(group, done, strict=True) if not isinstance(o, Left)]
            _answer([c for c, _ in answered], [o for _, o in answered])
            if not left:
                # The next group on a later round: its callers are the loop's to run
                # first, and a long queue is not done in one callback (nor one stack).
                if queue.waiting:
                    loop.call_soon(self._hand_over, loop, queue)
                else:
                    queue.busy = False
                return
            group = left
        items = [i for i, _ in group]

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
        """Hand each caller of ``group`` its outcome (:func:`_answer`), then the next
        group over — whatever happened: a group that never settled would leave every
        later call waiting."""
        try:
            _answer(group, outcomes)
        finally:
            self._hand_over(loop, queue)


def _answer(
    group: list[tuple[Item, asyncio.Future[Result]]], outcomes: list[Result | Exception]
) -> None:
    """Hand each caller of ``group`` its outcome; when there are not as many outcomes as
    callers (a wrong answer), every caller fails."""
    if len(outcomes) != len(group):
        outcomes = [_miscounted(len(outcomes), len(group))] * len(group)
    for (_, future), outcome in zip(group, outcomes, strict=True):
        if future.done():  # its caller gave up waiting (a timeout)
            continue
        if isinstance(outcome, Exception):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)


def _miscounted(outcomes: int, calls: int) -> RuntimeError:
    return RuntimeError(f"memory-sqlite: {outcomes} outcomes for a group of {calls} calls")


def _failed(exc: BaseException) -> Exception:
    """What the callers of a group hear when the database thread's call ended in a
    ``BaseException`` (e.g. ``SystemExit``) rather than an ``Exception``."""
    return RuntimeError(f"memory-sqlite: the database thread's call ended in {exc!r}")
