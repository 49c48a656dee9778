"""The scheduler: the one admission loop of a runtime.

It hands a turn to a worker task only when the store's atomic ``claim`` admits it
(thread idle, group under budget, ``not_before`` passed, best rank first) and the
runtime is under its global concurrency. It never blocks a worker on a lock: a turn
that may not run yet simply stays queued. Each turn's task hands in its terminal
state; the loop commits those in one transaction per pass, then admits into the slots
they free. A turn with post-turn stages (memory, events, delivery, a task run's
finalizing) waits for its commit and runs them; any other turn's task ends at once,
and its slot stays taken until the commit. The loop also wakes, renews leases, and
relays cancellations.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Coroutine,
    Iterator,
    Sequence,
)
from typing import TYPE_CHECKING, Any

import structlog

from toolang_core.errors import describe_exception
from toolang_core.events import Event
from toolang_core.execution.seam import (
    LEASE_LOST,
    SHUTDOWN,
    TurnExecutor,
)
from toolang_core.runtime.after_turn import AfterTurnStages
from toolang_core.runtime.commits import TurnCommits
from toolang_core.runtime.turn_tasks import TurnTasks
from toolang_core.store.errors import StoreError, StoreReplaced
from toolang_core.store.types import Recovery, TurnRequest
from toolang_core.turn.signals import TurnSignalBus, TurnSignals

if TYPE_CHECKING:
    from toolang_core.hookspecs.rules import HookFailure
    from toolang_core.inbox.inbox import Inbox
    from toolang_core.inbox.policy import AdmissionPolicy
    from toolang_core.plugins.facade import Hooks
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.store.protocol import ExecutionStore, Waker

log = structlog.get_logger("toolang.scheduler")


class Scheduler(TurnTasks):
    """Admits turns from one store and runs them with one executor."""

    def __init__(
        self,
        *,
        store: ExecutionStore,
        policy: AdmissionPolicy,
        executor: TurnExecutor,
        run_id: str,
        lease_seconds: float = 30.0,
        max_attempts: int = 3,
        poll_seconds: float = 0.5,
        clock: Callable[[], float] = time.time,
        runtime: RuntimeView,
        hooks: Hooks,
        inbox: Inbox | None = None,
        only: Collection[str] | None = None,
        on_event: Callable[[Event], Awaitable[list[HookFailure]]] | None = None,
        has_subscribers: Callable[[], bool] = lambda: True,
        on_heartbeat: Callable[[], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        """``runtime`` is what hooks and the executor are handed; ``hooks`` is how the
        scheduler calls them; ``inbox`` (the runtime's, when it keeps submitters' raw
        input) gives the executor a turn's input as written, and forgets it once the turn
        is done. ``on_event`` publishes a finished turn's events when ``has_subscribers()``
        says someone listens; ``on_heartbeat`` is periodic upkeep run after each
        heartbeat (the task-run sweep), one at a time."""
        self.store = store
        self.policy = policy
        self.executor = executor
        self.run_id = run_id
        self.lease_seconds = lease_seconds
        self.max_attempts = max_attempts
        self.poll_seconds = poll_seconds
        self.clock = clock
        self.runtime = runtime
        self.hooks = hooks
        self.inbox = inbox
        self.only = set(only) if only is not None else None
        self.on_event = on_event
        self.has_subscribers = has_subscribers
        self.on_heartbeat = on_heartbeat
        self.running: dict[str, asyncio.Task[None]] = {}
        self._lent: set[str] = set()
        self._parked: set[str] = set()
        """Turns waiting for a person (an approval): durable, so shutdown hands them
        back at once instead of waiting out its grace for them. A parked turn holds no
        slot of the global concurrency (nor of its group: the store counts it out)."""
        self._resuming: dict[str, asyncio.Future[bool]] = {}
        """Parked turns whose person answered, waiting for a slot again (see
        :meth:`parked`): served before the loop claims new work."""
        self._upkeep: asyncio.Task[None] | None = None
        self._committed: set[str] = set()
        """Turns committed and running their post-turn stages: no longer active in the
        store, so a heartbeat must not take them for turns whose lease was lost."""
        self._turns: dict[str, TurnRequest] = {}
        self._why_cancelled: dict[str, str] = {}
        self._wake = asyncio.Event()
        self.signals = TurnSignals.of(runtime)
        self.commits = TurnCommits(
            store,
            run_id=run_id,
            clock=clock,
            free=self._free,
            wake=self._wake,
            turns=self._turns,
            redaction=runtime.redaction,
            committed=self.signals.finished,
        )
        self._admitting = True
        self._grace_over = False
        self._store_failing = False
        self.admitted = 0
        self._after = self._after_turn_stages()
        self._observed = False
        """Whether a plugin watches turns (``toolang_turn_*``): decided once per run."""
        self._turn_log = log.bind()
        """Bound once: the module's lazy logger binds anew on every call, twice per turn."""

    # -- the loop -----------------------------------------------------------------------

    def wake(self) -> None:
        """Look at the store again now (a submission or cancellation happened)."""
        self._wake.set()

    @contextlib.contextmanager
    def lend(self, turn_id: str) -> Iterator[None]:
        """While ``turn_id`` waits for other turns (its task runs), its slot of the
        global concurrency is free for them: a parent holding the only slot while it
        waits for children that need one would wait forever."""
        self._lent.add(turn_id)
        self.wake()
        try:
            yield
        finally:
            self._lent.discard(turn_id)

    @contextlib.asynccontextmanager
    async def parked(self, turn_id: str) -> AsyncIterator[None]:
        """While ``turn_id`` waits for a person's decision (the turn shows
        ``awaiting_approval``; its request is in the store, and a resumed attempt finds
        it, decided or not):

        * its slot is free for other work — of ``[scheduler] max_running`` here, of its
          group's ``max_running`` in the store — while its thread stays busy;
        * a shutdown hands the turn back at once: a person may take hours, the grace is
          for work that ends.

        When the body ends normally (the person answered), the turn takes a slot again
        before it goes on: in the loop's next pass, before new work is claimed, in
        ``(rank, seq)`` order among answered turns, once its group has room — the store
        moves it back to ``running``. When the body raises, nothing is taken.
        """
        self._parked.add(turn_id)
        self.wake()  # its slot is free: admit into it
        if not self._admitting:  # parked during the grace: nothing to wait for either
            self.cancel_task(turn_id, SHUTDOWN)
        try:
            yield
            await self._slot_again(turn_id)
        finally:
            self._parked.discard(turn_id)

    @property
    def resuming(self) -> frozenset[str]:
        """Parked turns whose person answered, waiting for a slot to go on."""
        return frozenset(self._resuming)

    async def _slot_again(self, turn_id: str) -> None:
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._resuming[turn_id] = future
        self.wake()
        try:
            await future
        finally:
            self._resuming.pop(turn_id, None)

    def admit_with(self, parent_id: str, turn_id: str) -> None:
        """A one-shot scheduler (``only``) also admits ``turn_id``, spawned by
        ``parent_id`` which it admits — its task runs must run for it to finish."""
        if self.only is not None and parent_id in self.only:
            self.only.add(turn_id)
            self.wake()

    async def run(self, stop: asyncio.Event, *, until_idle: bool = False) -> None:
        """Admit and supervise turns until ``stop`` is set (or, with ``until_idle``,
        until nothing is running or waiting)."""
        self._observed = self.hooks.observes_turns()
        waker = self._listen()
        pump = asyncio.create_task(self._pump(waker))
        stopper = asyncio.create_task(self._relay(stop))
        beat_every = self.lease_seconds / 3
        next_beat = self.clock() + beat_every
        try:
            while not stop.is_set():
                now = self.clock()
                if now >= next_beat:
                    self._heartbeat(now)
                    self._start_upkeep()
                    next_beat = now + beat_every
                timeout = min(self.poll_seconds, max(0.0, next_beat - self.clock()))
                try:
                    # Records nobody waits for ride with the next terminal state
                    # while a turn that will hand one in is running.
                    self.commits.record(hold_records=self._busy())
                    self._relay_cancellations()
                    admitted = self._admit(now)
                    if until_idle and not self.running and not admitted and self._idle(now):
                        return
                    # Only to bound the wait below: none if another pass follows at once.
                    wakeup = None if self._wake.is_set() else self.store.next_wakeup(now=now)
                except StoreReplaced:  # its files are gone: stop, never acknowledge more
                    raise
                except StoreError as exc:  # e.g. a database server restarting: try again
                    self._store_trouble(exc)
                    wakeup = None
                    if not stop.is_set():  # wait a poll before trying again, not a busy loop
                        self._wake.clear()
                else:
                    self._store_back()
                if wakeup is not None:
                    timeout = max(0.0, min(timeout, wakeup - now))
                if not self._wake.is_set():
                    # asyncio.timeout, not wait_for: no task of its own on every pass
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(timeout):
                            await self._wake.wait()
                self._wake.clear()
        finally:
            pump.cancel()
            stopper.cancel()
            if self._upkeep is not None and not self._upkeep.done():
                self._upkeep.cancel()
            try:
                # The pump's pending receive must end before its socket closes: the loop
                # would go on watching a closed descriptor, and the next socket to get
                # that number (an HTTP client's, say) could not be registered (ENOENT).
                await asyncio.gather(pump, stopper, return_exceptions=True)
            finally:
                waker.close()
                await self.signals.detach()

    def _listen(self) -> Waker:
        """The store's wake-ups; a store carrying turn signals links this runtime's
        doors to the other runtimes' turns (attached first: one listener for both)."""
        if isinstance(self.store, TurnSignalBus):
            self.signals.attach(self.store)
        return self.store.listen()

    def _start_upkeep(self) -> None:
        if self.on_heartbeat is None or (self._upkeep is not None and not self._upkeep.done()):
            return
        self._upkeep = asyncio.create_task(self.on_heartbeat(), name="upkeep")

    async def _pump(self, waker: object) -> None:
        while True:
            if await waker.wait(3600):  # type: ignore[attr-defined]
                self._wake.set()

    async def _relay(self, stop: asyncio.Event) -> None:
        await stop.wait()
        self._wake.set()

    def _busy(self) -> bool:
        """Whether a running turn is expected to end soon: neither parked nor lent."""
        return len(self.running) > len(self._parked) + len(self._lent)

    def _idle(self, now: float) -> bool:
        if self.only is not None:
            return all(
                (turn := self.store.get(turn_id)) is None or turn.status.is_terminal
                for turn_id in self.only
            )
        return self.store.next_wakeup(now=now) is None

    def _admit(self, now: float) -> int:
        free = self.policy.max_running - len(self.running) + len(self._lent) + len(self._parked)
        if self._resuming and free > 0:
            free = self._resume(free, now)
        if not self._admitting or free <= 0:
            return 0
        turns = self.store.claim(
            run_id=self.run_id,
            limit=free,
            now=now,
            lease_seconds=self.lease_seconds,
            caps=self.policy.caps,
            only=self.only,
        )
        for turn in turns:
            task = asyncio.create_task(self._run_turn(turn), name=f"turn-{turn.id}")
            self.running[turn.id] = task
            self._turns[turn.id] = turn
            self._turn_log.debug(
                "turn.started", turn=turn.id, thread=turn.thread_id, attempt=turn.attempt
            )
        self.admitted += len(turns)
        return len(turns)

    def _resume(self, free: int, now: float) -> int:
        """Give answered parked turns their slots back, oldest ``(rank, seq)`` first,
        each once its group has room; return the slots left for new work."""
        turns = self._turns
        waiting = sorted(
            (t for t in self._resuming if t in turns), key=lambda t: (turns[t].rank, turns[t].seq)
        )
        for turn_id in waiting:
            if free <= 0:
                break
            future, turn = self._resuming[turn_id], turns[turn_id]
            if future.done():
                continue
            resumed = self.store.resume_parked(
                turn_id,
                run_id=self.run_id,
                attempt=turn.attempt,
                cap=self.policy.caps.get(turn.thread_group),
                now=now,
            )
            if resumed is False:  # its group is full: a later pass, when a slot frees
                continue
            if resumed:
                free -= 1
            # Holds its slot from now (or, no longer parked by this run, goes on to find
            # out: it was canceled or lost its lease).
            self._parked.discard(turn_id)
            future.set_result(bool(resumed))
        return free

    def _done(self, turn_id: str, _task: object = None) -> None:
        """A turn's task ended: its slot is free (unless its commit is still to come)."""
        if turn_id in self.commits.uncommitted or turn_id not in self.running:
            return  # the commit frees its slot (or already did)
        self._free(turn_id)
        self._wake.set()  # admit into the free slot

    def _free(self, turn_id: str) -> None:
        if self.inbox is not None:
            self.inbox.forget_raw(turn_id)
        self._committed.discard(turn_id)
        self.running.pop(turn_id, None)
        self._turns.pop(turn_id, None)
        self._why_cancelled.pop(turn_id, None)

    def _store_trouble(self, exc: StoreError) -> None:
        if not self._store_failing:
            log.warning("runtime.store_unavailable", error=describe_exception(exc))
        self._store_failing = True

    def _store_back(self) -> None:
        if self._store_failing:
            log.info("runtime.store_available")
        self._store_failing = False

    def _heartbeat(self, now: float) -> None:
        try:
            beat = self.store.heartbeat(
                self.run_id, now=now, lease_expires=now + self.lease_seconds
            )
            if not self.store.exclusive:
                self._sweep(now)
        except StoreReplaced:
            raise
        except Exception as exc:  # a transient store error must not stop the loop
            log.warning("runtime.heartbeat_failed", error=describe_exception(exc))
            return
        for turn_id in list(self.running):
            if turn_id not in beat.owned and turn_id not in self._committed:
                self.cancel_task(turn_id, LEASE_LOST)
        for turn_id in beat.cancel_requested:
            self.cancel_task(turn_id, "canceled")

    def _sweep(self, now: float) -> None:
        """On a shared store, any live runtime takes back the turns of a dead one: runs
        silent for three leases are marked lost (for people reading ``status``), and
        turns whose lease expired are requeued. Only the lease decides: it was written
        by the runtime holding the turn, which may use a longer lease than this one."""
        dead = self.store.mark_lost_runs(
            now=now, stale_before=now - 3 * self.lease_seconds, exclude=self.run_id
        )
        recovery = self.store.recover(now=now, max_attempts=self.max_attempts)
        log_recovery(dead, recovery)

    def _relay_cancellations(self) -> None:
        if not self.running:
            return
        for turn_id in self.store.cancel_requests(self.run_id):
            self.cancel_task(turn_id, "canceled")

    def cancel_reason(self, turn_id: str) -> str | None:
        """Why this scheduler canceled ``turn_id``'s task (``canceled``, ``shutdown``,
        ``lease_lost``); ``None`` when it did not (e.g. the turn's time limit)."""
        return self._why_cancelled.get(turn_id)

    def cancel_task(self, turn_id: str, why: str) -> None:
        """Cancel the task running ``turn_id``; ``why`` decides how it is recorded."""
        task = self.running.get(turn_id)
        if task is not None and turn_id not in self._why_cancelled:
            self._why_cancelled[turn_id] = why
            # A task canceled before its first step never runs _run_turn's finally.
            task.add_done_callback(functools.partial(self._done, turn_id))
            task.cancel()

    def _after_turn_stages(self) -> AfterTurnStages:
        """The post-turn stages of this scheduler's turns (one for all of them)."""
        return AfterTurnStages(
            self.runtime,
            self.store,
            hooks=self.hooks,
            run_id=self.run_id,
            clock=self.clock,
            publish=self.on_event,
            has_subscribers=self.has_subscribers,
            later=self.commits.later,
        )

    # -- shutdown ------------------------------------------------------------------------

    def end_grace(self) -> None:
        """Stop waiting for running turns at shutdown (a second signal): :meth:`drain`
        hands them back at once, whether it has started or not."""
        self._grace_over = True

    async def drain(self, grace_seconds: float) -> None:
        """Stop admitting; give running turns ``grace_seconds`` (until :meth:`end_grace`);
        hand the rest back. A tool call that finishes meanwhile records its result, so
        it is replayed, not run again, when its turn resumes. A turn waiting for a
        person (:meth:`parked`) is handed back at once, its request left pending."""
        self._admitting = False
        if self.running:
            log.info("runtime.draining", running=len(self.running), grace_seconds=grace_seconds)
        for turn_id in list(self._parked):
            self.cancel_task(turn_id, SHUTDOWN)
        deadline = self.clock() + grace_seconds
        while self.running and self.clock() < deadline and not self._grace_over:
            await self._settle()
        if self.running:
            log.warning(
                "runtime.handing_back",
                running=len(self.running),
                why="grace ended early (a second signal)" if self._grace_over else "grace over",
            )
        for turn_id in list(self.running):
            self.cancel_task(turn_id, SHUTDOWN)
        while self.running:
            await self._settle()
        self.commits.record_or_drop()

    async def _settle(self) -> None:
        """Commit what finished, then give running turns a moment."""
        self.commits.record_or_drop()
        if self.running:
            await asyncio.wait(list(self.running.values()), timeout=0.01)


def log_recovery(dead: Sequence[str], recovery: Recovery) -> None:
    """Log what a recovery did (start-up's or a sweep's), when it did anything."""
    if dead or recovery.requeued or recovery.failed or recovery.canceled:
        log.info(
            "runtime.recovered",
            lost_runs=list(dead),
            requeued=len(recovery.requeued),
            failed=len(recovery.failed),
            canceled=len(recovery.canceled),
        )
