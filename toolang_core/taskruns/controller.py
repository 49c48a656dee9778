"""The task-run controller: spawn, get, list, wait, cancel and read task runs.

There is no second runtime behind it. Spawning submits a turn request of source
``task`` on the child thread ``task:<run id>`` (the run id *is* the request id), with
the owner, the parent turn and thread, the agent, the task as input, the timeout and
the metadata; the same scheduler admits it under the ``task`` group's budget, the same
store keeps it, the same recovery resumes it after a crash. Every method works from
any process over any store backend: waiting polls the store (and is woken at once by
changes made through this controller).

Ownership is enforced here, not only in the tools: every read and change names the
caller's ``owner``, and a run of another owner is :class:`TaskRunNotFound` — the same
answer as a run that does not exist. ``owner=None`` is the operator's view (the CLI).
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import attrs
import structlog

from toolang_core.ids import check_id, new_id
from toolang_core.inbox.inbox import Inbox
from toolang_core.store.errors import RecordConflict, SubmitRejected
from toolang_core.store.owners import may_see
from toolang_core.store.types import NewTurnRequest, TurnFilter, TurnRequest, TurnStatus
from toolang_core.store.usage import Usage, UsageFilter
from toolang_core.taskruns import finalize, retention, view
from toolang_core.taskruns.transcript import recent
from toolang_core.taskruns.types import (
    SOURCE,
    THREAD_PREFIX,
    ApprovalWait,
    SpawnRequest,
    TaskRun,
    TaskRunError,
    TaskRunExists,
    TaskRunFilter,
    TaskRunNotFound,
    TaskRunStatus,
    TaskRunTranscript,
)
from toolang_core.tools.approvals import ApprovalBook
from toolang_core.tracecontext import trace_context_meta

if TYPE_CHECKING:
    from toolang_core.runtime_parts import CoreRuntime
    from toolang_core.store.protocol import ExecutionStore

log = structlog.get_logger("toolang.taskruns")

BLOCKED_KIND: Final = "taskrun.blocked"
"""Records of each run's latest approval-blocked condition, keyed by run id."""

_PAGE: Final = 200


class TaskRunController:
    """Task runs in one execution store, for one runtime's plugins and configuration.

    ``runtime`` supplies the admission policy (the ``task`` group's priority, budget and
    overflow), the finalizer and observer hooks and ``[delegation]``; it need not be
    serving — the CLI builds a controller over a store it opened itself.
    """

    def __init__(
        self,
        store: ExecutionStore,
        runtime: CoreRuntime,
        *,
        clock: Callable[[], float] | None = None,
        poll_seconds: float = 0.1,
    ) -> None:
        self.store = store
        self.runtime = runtime
        self.clock = clock or runtime.clock
        self.poll_seconds = poll_seconds
        self._waiters: list[asyncio.Future[None]] = []
        self.finalizing: set[str] = set()
        """Runs this controller is finalizing right now (never twice at once)."""

    # -- spawn -----------------------------------------------------------------------------

    async def spawn(self, request: SpawnRequest) -> TaskRun:
        """Store a new run ``queued`` (durably) and return its view.

        :raises TaskRunError: for a missing owner, parent thread or task (checked in
            that order), an invalid id, or a full ``task`` queue (its overflow rule).
        :raises TaskRunExists: when ``request.id`` was spawned before.
        """
        if not request.owner.strip():
            raise TaskRunError("taskrun: empty owner")
        if not request.parent_thread_id.strip():
            raise TaskRunError("taskrun: empty parent thread id")
        task = request.task.strip()
        if not task:
            raise TaskRunError("taskrun: empty task")
        run_id = request.id.strip() if request.id else new_id()
        try:
            check_id(run_id, "task run id")
        except ValueError as exc:
            raise TaskRunError(f"taskrun: {exc}") from None
        now = self.clock()
        # The open record first: a spawn that dies before submitting leaves a record the
        # sweep drops, never a run nobody would finalize.
        try:
            self.store.put_record(
                view.OPEN_KIND, run_id, {"created_at": now}, now=now, expect_revision=0
            )
        except RecordConflict:
            raise TaskRunExists() from None
        try:
            inbox = Inbox(
                self.store, self.runtime.policy, clock=self.clock, redaction=self.runtime.redaction
            )
            submitted = inbox.submit(_turn_request(run_id, task, request))
        except SubmitRejected as exc:
            self.store.delete_record(view.OPEN_KIND, run_id)
            raise TaskRunError(f"taskrun: not queued: {exc}") from None
        if submitted.status != "queued":
            self.store.delete_record(view.OPEN_KIND, run_id)
            raise TaskRunExists()
        self._admit_with_parent(run_id, request.parent_turn_id)
        run = self.get(run_id, owner=None)
        await self.observe(run)
        return run

    def child_by_key(self, parent_turn_id: str, key: str, *, owner: str | None) -> TaskRun | None:
        """The run ``parent_turn_id`` spawned with the idempotency key ``key`` (its
        :attr:`SpawnRequest.key`), or ``None``: how a spawning tool call found in doubt
        after a crash finds its run — finished or not, it is a known outcome."""
        before: int | None = None
        while True:
            page = self.store.list_turns(
                TurnFilter(parent=parent_turn_id, source=SOURCE, limit=_PAGE, before_seq=before)
            )
            for turn in page:
                if view.is_task_run(turn) and turn.meta[view.META_KEY].get("key") == key:
                    if not may_see(turn.owner, owner):
                        return None
                    return self._view(turn)
            if len(page) < _PAGE:
                return None
            before = page[-1].seq

    def _admit_with_parent(self, run_id: str, parent_turn_id: str | None) -> None:
        # A one-shot runtime (`toolang chat` without `toolang run`) admits only its own
        # request; the runs that request spawns must be admitted too, or it would wait
        # for them forever.
        if parent_turn_id:
            self.runtime.admit_spawned(self.store, parent_turn_id, run_id)

    # -- reads -----------------------------------------------------------------------------

    def get(self, run_id: str, *, owner: str | None) -> TaskRun:
        """The run's current view, with its :meth:`usage`.

        :raises TaskRunNotFound: unknown or another owner's."""
        return self._with_usage(self._view(self._turn(run_id, owner)), owner)

    def usage(self, run_id: str, *, owner: str | None) -> Usage:
        """The tokens and model calls of the run: every turn on its thread and on the
        threads of the runs it spawned, theirs in turn (the store's
        ``UsageFilter(task_run=…)``), of ``owner``'s turns only (``None``: every owner's).

        :raises TaskRunNotFound: unknown or another owner's."""
        self._turn(run_id, owner)
        return self.store.usage(UsageFilter(task_run=run_id, owner=owner))

    def _with_usage(self, run: TaskRun, owner: str | None) -> TaskRun:
        return attrs.evolve(run, usage=self.store.usage(UsageFilter(task_run=run.id, owner=owner)))

    def list(self, where: TaskRunFilter | None = None) -> list[TaskRun]:
        """Runs matching ``where``, newest first (at most ``where.limit``)."""
        where = where or TaskRunFilter()
        found: list[TaskRun] = []
        before: int | None = None
        while len(found) < where.limit:
            page = self.store.list_turns(
                TurnFilter(
                    source=SOURCE,
                    owner=where.owner,
                    parent=where.parent_turn_id,
                    limit=_PAGE,
                    before_seq=before,
                )
            )
            for turn in page:
                if not view.is_task_run(turn):
                    continue
                parent_thread = turn.meta[view.META_KEY].get("parent_thread_id")
                if where.parent_thread_id is not None and parent_thread != where.parent_thread_id:
                    continue
                run = self._view(turn)
                if where.status is None or run.status is where.status:
                    found.append(run)
                    if len(found) >= where.limit:
                        break
            if len(page) < _PAGE:
                break
            before = page[-1].seq
        return found

    def active(self, *, owner: str | None = None, limit: int = 20) -> builtins.list[TaskRun]:
        """Runs not finished yet — queued, running, canceling, finalizing — newest
        first (read from the open list: cheap however many runs finished before)."""
        records = sorted(
            self.store.list_records(view.OPEN_KIND),
            key=lambda r: float(r.data.get("created_at", 0)),
            reverse=True,
        )
        found = []
        for record in records:
            turn = self.store.get(record.key)
            if turn is None or not view.is_task_run(turn):
                continue
            if not may_see(turn.owner, owner):
                continue
            run = self._view(turn)
            if not run.status.is_terminal:
                found.append(run)
            if len(found) >= limit:
                break
        return found

    def read_transcript(
        self,
        run_id: str,
        *,
        owner: str | None,
        parent_thread_id: str | None = None,
        limit: int | None = None,
    ) -> TaskRunTranscript:
        """The run's most recent events (default 40, at most 200), oldest first.

        ``parent_thread_id`` (the tools pass the caller's thread) must be the run's
        parent thread too.

        :raises TaskRunNotFound: unknown, another owner's, or another thread's run.
        :raises TaskRunError: when the run has not started yet.
        """
        turn = self._turn(run_id, owner)
        if (
            parent_thread_id is not None
            and turn.meta[view.META_KEY].get("parent_thread_id") != parent_thread_id
        ):
            raise TaskRunNotFound()
        if turn.started_at is None:
            raise TaskRunError("taskrun: child thread id unavailable (the run has not started)")
        run = self._view(turn)
        events = recent(turn, self.store.steps(turn.id), limit)
        return TaskRunTranscript(run.id, run.status, turn.thread_id, tuple(events))

    # -- wait and cancel -------------------------------------------------------------------

    async def wait(
        self,
        run_id: str,
        *,
        owner: str | None,
        timeout: float | None = None,
        until_blocked: bool = False,
    ) -> TaskRun:
        """Wait until the run is terminal and return it; after ``timeout`` seconds return
        its current view instead (the run goes on). ``until_blocked`` also returns as
        soon as the run waits for an approval.

        :raises TaskRunNotFound: unknown or another owner's run.
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + max(0.0, timeout)
        delay = min(0.005, self.poll_seconds)
        while True:
            run = self._view(self._turn(run_id, owner))  # the usage sum once, at the end
            if until_blocked and run.awaiting_approval is not None:
                self._mirror_blocked(run, run.awaiting_approval)
                return self._with_usage(run, owner)
            if run.status.is_terminal:
                return self._with_usage(run, owner)
            if deadline is not None and loop.time() >= deadline:
                return self._with_usage(run, owner)
            pause = delay if deadline is None else min(delay, max(0.0, deadline - loop.time()))
            await self._changed(pause)
            delay = min(delay * 2, self.poll_seconds)

    def _mirror_blocked(self, run: TaskRun, wait: ApprovalWait) -> None:
        """Keep the run's latest blocked condition as a ``taskrun.blocked`` record (the
        run ledger), for later inspection; best effort — the wait answers either way."""
        try:
            self.store.put_record(
                BLOCKED_KIND,
                run.id,
                {**wait.to_json(), "run_id": run.id, "observed_at": self.clock()},
                now=self.clock(),
            )
        except Exception as exc:
            log.warning("taskrun.blocked_not_mirrored", run=run.id, error=str(exc))

    async def cancel(
        self, run_id: str, *, owner: str | None, reason: str = "canceled"
    ) -> tuple[TaskRun, bool]:
        """Cancel a run: a queued one ends ``canceled`` at once (finalizers run); a
        running one goes ``canceling`` and ends ``canceled`` when its turn stops. Runs it
        spawned are canceled too. A run that is terminal, finalizing or already canceling
        is left as it is (``changed`` is ``False``).

        :raises TaskRunNotFound: unknown or another owner's run.
        """
        run = self.get(run_id, owner=owner)
        if run.status not in (TaskRunStatus.QUEUED, TaskRunStatus.RUNNING):
            return run, False
        result = self.store.cancel(run_id, now=self.clock(), reason=reason)
        if not result.changed:
            return self.get(run_id, owner=owner), False
        for other, status in result.changed.items():
            if status is TurnStatus.CANCELED:
                await self.finalize(other)
        run = self.get(run_id, owner=owner)
        if run.status is TaskRunStatus.CANCELING:
            await self.observe(run)
        self.notify()
        return run, True

    # -- finalization (see finalize.py) ------------------------------------------------------

    async def finalize(self, run_id: str) -> TaskRun | None:
        """Finalize a run whose turn ended; ``None`` if it is not one (or not ended)."""
        return await finalize.finalize(self, run_id)

    async def sweep(self) -> builtins.list[str]:
        """Finalize every run whose turn ended unnoticed (a crash, a cancel elsewhere)."""
        return await finalize.sweep(self)

    def prune(
        self, *, older_than_seconds: float, owner: str | None = None, dry_run: bool = False
    ) -> builtins.list[str]:
        """Delete finalized runs that finished more than ``older_than_seconds`` ago (of
        ``owner``, or everyone's); with ``dry_run`` only list them. Returns their ids."""
        ids = retention.prunable(
            self.store, finished_before=self.clock() - older_than_seconds, owner=owner
        )
        return ids if dry_run else retention.delete_runs(self.store, ids)

    async def started(self, turn: TurnRequest) -> None:
        """Tell observers a run's turn started (the executor calls this)."""
        if self._observed():
            await self.observe(self._view(turn))

    # -- plumbing ----------------------------------------------------------------------------

    def notify(self) -> None:
        """Wake this controller's waiters now (a run changed)."""
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def _changed(self, timeout: float) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            pass
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def _observed(self) -> bool:
        return bool(self.runtime.hooks.implementations("toolang_observe_task_run"))

    async def observe(self, run: TaskRun) -> None:
        """Tell the observer hooks about a stored change of ``run``."""
        if self._observed():
            await self.runtime.hooks.observe_task_run(run, self.runtime)

    def _turn(self, run_id: str, owner: str | None) -> TurnRequest:
        turn = self.store.get(run_id) if run_id else None
        if turn is None or not view.is_task_run(turn):
            raise TaskRunNotFound()
        if not may_see(turn.owner, owner):
            raise TaskRunNotFound()
        return turn

    def _view(self, turn: TurnRequest) -> TaskRun:
        final = self.store.get_record(view.FINAL_KIND, turn.id) if turn.status.is_terminal else None
        steps = self.store.steps(turn.id) if final is None and turn.started_at else None
        approval = (
            _approval_of(self.store, turn) if turn.status is TurnStatus.AWAITING_APPROVAL else None
        )
        return view.build(turn, final, steps, approval=approval)


def _turn_request(run_id: str, task: str, request: SpawnRequest) -> NewTurnRequest:
    meta: dict[str, Any] = {
        view.META_KEY: {
            "parent_thread_id": request.parent_thread_id,
            "metadata": {str(k): str(v) for k, v in request.metadata.items()},
            "spawn_reason": request.spawn_reason,
            **({"key": request.key} if request.key else {}),
        },
        "spawn_depth": request.spawn_depth,
    }
    if request.allowed_tools is not None:
        meta["allowed_tools"] = list(request.allowed_tools)
    if request.tool_ceiling is not None:
        meta["tool_ceiling"] = list(request.tool_ceiling)
    if request.budget is not None:
        meta["budget"] = request.budget.to_meta()
    meta.update(trace_context_meta(request.metadata))
    timeout = request.timeout_seconds
    return NewTurnRequest(
        source=SOURCE,
        thread_id=THREAD_PREFIX + run_id,
        input=task,
        priority=request.priority,
        sender=request.sender or request.owner,
        agent=request.agent_name or None,
        parent=request.parent_turn_id,
        owner=request.owner,
        timeout_seconds=timeout if timeout is not None and timeout > 0 else None,
        meta=meta,
        strategy="enqueue",
        id=run_id,
    )


def _approval_of(store: ExecutionStore, turn: TurnRequest) -> ApprovalWait | None:
    """The pending approval a run's turn waits for (read only while it waits)."""
    asked = [a for a in ApprovalBook(store).list() if a.turn_id == turn.id]  # oldest first
    waiting = [n for n, a in enumerate(asked, 1) if a.status == "pending"]
    if not waiting:
        return None
    latest = asked[waiting[-1] - 1]
    return ApprovalWait(latest.id, latest.tool, latest.prompt, attempt=waiting[-1])
