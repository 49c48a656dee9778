"""The execution-store contract every backend implements.

The SQLite backend ships in core; ``toolang-store-postgres`` implements the same
contract for many runtime processes on many machines. A backend proves itself by
passing ``toolang_core.testing.store_conformance``.

Rules every backend keeps:

* **Durable ingress.** ``submit`` returns only after the request is stored ``queued``.
* **Admission in one atomic step.** ``claim`` starts requests only when their thread has
  no active turn (also guaranteed by a constraint), their group is under its cap, their
  ``not_before`` has passed, and they are their thread's head; it picks the lowest
  ``(rank, seq)`` first.
* **Fencing.** Every write on behalf of a running turn names ``(run_id, attempt)``; a
  write from a runtime that lost the lease is refused (returns ``False``).
* **Idempotent terminal states.** A request reaches exactly one terminal status.

Methods are synchronous and short; the runtime calls them from its event loop.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from toolang_core.store.types import (
    CancelResult,
    Finish,
    GroupCount,
    Heartbeat,
    NewTurnRequest,
    PastTurn,
    Record,
    RecordWrite,
    Recovery,
    RunRecord,
    StepRecord,
    SubmitResult,
    SubmitRules,
    ThreadInfo,
    TurnFilter,
    TurnRequest,
    TurnStatus,
)
from toolang_core.store.usage import Usage, UsageFilter


class Waker(Protocol):
    """Wake-ups for the runtime that owns a store; a hint only — the rows are the truth."""

    async def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a wake-up; ``True`` if one arrived."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class ExecutionStore(Protocol):
    """Durable state of turn requests, turns, steps, runs and plugin records."""

    name: str
    """The backend's name, e.g. ``sqlite``."""

    exclusive: bool
    """``True`` when at most one runtime may use the store at a time (embedded SQLite):
    at start-up every turn owned by an earlier run is then known to be orphaned."""

    location: str
    """Where the store lives (a path, or a DSN with the password masked)."""

    # -- lifecycle -------------------------------------------------------------------

    def close(self) -> None: ...

    def acquire(self, run_id: str, *, wait_seconds: float = 0.0) -> None:
        """Take the store for one runtime. An exclusive store waits up to
        ``wait_seconds`` and then refuses a second runtime
        (:class:`~toolang_core.store.errors.StoreBusy`); a shared one accepts every call."""
        ...

    def runtime_running(self) -> bool | None:
        """Whether a runtime serves this store right now (``None``: cannot tell)."""
        ...

    def listen(self) -> Waker:
        """Start receiving wake-ups (submissions, cancellations) from any process."""
        ...

    # -- runs ------------------------------------------------------------------------

    def begin_run(self, run: RunRecord) -> None: ...

    def heartbeat(self, run_id: str, *, now: float, lease_expires: float) -> Heartbeat:
        """Renew the run and the leases of its active turns; report cancel requests."""
        ...

    def end_run(self, run_id: str, *, now: float, status: str = "stopped") -> None: ...

    def list_runs(self, limit: int = 20) -> list[RunRecord]: ...

    def mark_lost_runs(self, *, now: float, stale_before: float, exclude: str) -> list[str]:
        """Mark runs still ``running`` whose heartbeat is older than ``stale_before`` lost."""
        ...

    # -- inbox -----------------------------------------------------------------------

    def submit(self, request: NewTurnRequest, rules: SubmitRules, *, now: float) -> SubmitResult:
        """Store a request ``queued`` (or coalesce / steer / interrupt per ``rules``).

        :raises SubmitRejected: when the strategy or the overflow rule refuses it.
        """
        ...

    # -- admission and the turn lifecycle ---------------------------------------------

    def claim(
        self,
        *,
        run_id: str,
        limit: int,
        now: float,
        lease_seconds: float,
        caps: Mapping[str, int],
        only: Collection[str] | None = None,
    ) -> list[TurnRequest]:
        """Atomically start up to ``limit`` admissible requests (``running``, attempt + 1).

        ``caps`` maps a thread group to its ``max_running`` (absent: unlimited). ``only``
        restricts admission to those ids (a one-shot ``invoke``).
        """
        ...

    def set_active_status(
        self, turn_id: str, *, run_id: str, attempt: int, status: TurnStatus, now: float
    ) -> bool:
        """Move a running turn to ``awaiting_approval`` or back to ``running`` (fenced).

        A turn ``awaiting_approval`` holds no slot of its group's ``max_running`` (the
        claims' caps count ``running`` and ``canceling`` turns) and still keeps its
        thread busy; it takes a slot again through :meth:`resume_parked`."""
        ...

    def resume_parked(
        self, turn_id: str, *, run_id: str, attempt: int, cap: int | None, now: float
    ) -> bool | None:
        """Move a turn this run parked (``awaiting_approval``) back to ``running`` if its
        group has a free slot under ``cap`` (``None``: no cap), atomically with respect
        to claims of that group.

        :returns: ``True`` when it runs again, ``False`` when its group is full (ask
            again when a slot frees), ``None`` when it is not parked by ``run_id`` at
            ``attempt`` any more (canceled, lease lost)."""
        ...

    def finish(
        self,
        turn_id: str,
        *,
        run_id: str,
        attempt: int,
        status: TurnStatus,
        now: float,
        output: str | None = None,
        outcome: str | None = None,
        error: str | None = None,
    ) -> bool:
        """Record the terminal status of a turn this run holds; ``False`` if fenced out."""
        ...

    def finish_many(self, items: Sequence[Finish]) -> list[bool]:
        """:meth:`finish` for several turns in one transaction; one result per item."""
        ...

    def release(
        self, turn_id: str, *, run_id: str, attempt: int, now: float, max_attempts: int
    ) -> bool:
        """Give a running turn back to the queue at shutdown (fenced). The attempt counts
        as a crash's does: a turn at ``max_attempts`` fails with outcome ``abandoned``
        instead, and one that was ``canceling`` ends ``canceled``."""
        ...

    def recover(
        self, *, now: float, max_attempts: int, dead_runs: Collection[str] = ()
    ) -> Recovery:
        """Requeue active turns whose lease expired (or whose run is dead).

        A turn past ``max_attempts`` fails with outcome ``abandoned``; one that was
        ``canceling`` ends ``canceled``.
        """
        ...

    # -- cancellation and steering ------------------------------------------------------

    def cancel(self, turn_id: str, *, now: float, reason: str = "canceled") -> CancelResult:
        """Cancel a request and, recursively, the requests whose ``parent`` it is.

        :raises TurnNotFound: for an unknown id.
        """
        ...

    def cancel_requests(self, run_id: str) -> frozenset[str]:
        """Ids of this run's active turns that were asked to cancel (a cheap read)."""
        ...

    def take_steer(
        self, turn_id: str, *, run_id: str, attempt: int, now: float
    ) -> list[TurnRequest]:
        """Hand the running turn the steering requests queued on its thread (marked steered)."""
        ...

    # -- steps -------------------------------------------------------------------------

    def record_step(self, step: StepRecord, *, run_id: str) -> StepRecord | None:
        """Append a finished step of a turn this run holds (its ``seq`` is assigned);
        ``None`` if fenced out. A duplicate idempotency key returns the stored step."""
        ...

    def record_steps(self, steps: Sequence[StepRecord], *, run_id: str) -> list[StepRecord] | None:
        """:meth:`record_step` for several steps of one turn, in order, in one
        transaction: all stored (each with its ``seq``, or the stored step for a
        duplicate idempotency key) or, fenced out, none (``None``)."""
        ...

    def complete_step(self, step: StepRecord, *, run_id: str) -> StepRecord | None:
        """Replace the ``intent`` step stored under ``step.idempotency_key`` with its
        result (``step``'s attempt, status, finish time, data and error; its ``seq`` is
        kept), fenced like :meth:`record_step`. ``None`` when fenced out or when no
        intent is stored under that key (a result is recorded once)."""
        ...

    def steps(self, turn_id: str) -> list[StepRecord]: ...

    def find_step(self, idempotency_key: str) -> StepRecord | None:
        """The step with this idempotency key, if any (for replay; an ``intent`` step
        is a tool call that started and never recorded its result)."""
        ...

    # -- queries -----------------------------------------------------------------------

    def get(self, turn_id: str) -> TurnRequest | None: ...

    def list_turns(self, where: TurnFilter | None = None) -> list[TurnRequest]: ...

    def thread_history(self, thread_id: str, *, before_seq: int, limit: int) -> list[PastTurn]:
        """The turns of ``thread_id`` before ``before_seq``, newest first, at most
        ``limit``: what was said in each (read for every agent turn's prompt)."""
        ...

    def thread(self, thread_id: str) -> ThreadInfo | None: ...

    def list_threads(self, limit: int = 50) -> list[ThreadInfo]: ...

    def counts(self) -> list[GroupCount]:
        """How many requests per thread group and status (terminal ones included)."""
        ...

    def usage(self, where: UsageFilter) -> Usage:
        """The tokens and model calls of the completed model-call steps ``where``
        selects (:mod:`toolang_core.store.usage`): a turn, thread (a task run), owner,
        spend budget (a team), since a time. Nothing matched: a zero :class:`Usage`."""
        ...

    def usage_by_owner(self, where: UsageFilter) -> dict[str, Usage]:
        """:meth:`usage` per turn owner (``""``: turns with none), owners in order;
        owners with no matching model call are left out."""
        ...

    def group_load(self) -> dict[str, tuple[int, int]]:
        """``group -> (running, queued)``, cheaply (for status lines); running counts
        the turns holding a slot (not those awaiting approval)."""
        ...

    def next_wakeup(self, *, now: float) -> float | None:
        """The earliest future ``not_before`` of a queued head, if any."""
        ...

    # -- retention -----------------------------------------------------------------------

    def delete_turns(self, turn_ids: Collection[str]) -> list[str]:
        """Delete finished turn requests with their steps (retention, e.g. ``toolang tasks
        prune``); a thread left without requests goes too. A request that is not terminal
        is kept. Returns the ids deleted."""
        ...

    # -- plugin records ------------------------------------------------------------------

    def get_record(self, kind: str, key: str) -> Record | None: ...

    def put_record(
        self,
        kind: str,
        key: str,
        data: Mapping[str, Any],
        *,
        now: float,
        expect_revision: int | None = None,
    ) -> Record:
        """Create or replace a record. With ``expect_revision`` (0 = must not exist) the
        write only happens if the stored revision matches.

        :raises RecordConflict: when it does not.
        """
        ...

    def put_records(self, items: Sequence[RecordWrite], *, now: float) -> None:
        """:meth:`put_record` without an expected revision for each ``(kind, key,
        data)`` of ``items``, in order, in one transaction: all written or none. For
        records many turns write at once (what ran after each of them)."""
        ...

    def list_records(self, kind: str) -> list[Record]: ...

    def delete_record(self, kind: str, key: str) -> bool: ...
