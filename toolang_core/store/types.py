"""The values an execution store takes and returns.

Times are POSIX seconds (``float``, UTC). A turn request is identified by ``id`` and
ordered by ``seq`` (arrival) within its ``rank`` (priority with aging, see
:func:`rank_for`).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from toolang_core.store.json_text import nul_written_out

JSONDict = Mapping[str, Any]
RecordWrite = tuple[str, str, JSONDict]
"""A record to write whatever its revision: ``(kind, key, data)``."""

Strategy = Literal["enqueue", "reject", "coalesce", "interrupt", "steer"]
Overflow = Literal["reject", "drop_oldest", "replace_pending"]
StepStatus = Literal["intent", "completed", "failed"]

NO_AGING_WEIGHT = 1e9
"""Seconds per priority step when aging is off: priority then strictly dominates."""


class TurnStatus(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    CANCELING = "canceling"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"
    DROPPED = "dropped"
    """Removed from the queue by its group's overflow rule; never ran."""
    STEERED = "steered"
    """Delivered into the running turn of its thread instead of running on its own."""

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL

    @property
    def is_active(self) -> bool:
        return self in ACTIVE


ACTIVE = frozenset({TurnStatus.RUNNING, TurnStatus.AWAITING_APPROVAL, TurnStatus.CANCELING})
TERMINAL = frozenset(
    {
        TurnStatus.COMPLETED,
        TurnStatus.FAILED,
        TurnStatus.CANCELED,
        TurnStatus.DROPPED,
        TurnStatus.STEERED,
    }
)


def rank_for(eligible_at: float, priority: int, aging_seconds: float) -> float:
    """The admission key: lower is admitted first.

    A waiting request gains one priority step every ``aging_seconds``. Ranking by its
    effective priority at time ``t`` — ``priority + (t - eligible_at) / aging`` —
    orders requests exactly as ``eligible_at - priority * aging`` does, because ``t``
    is the same for everyone. So aging needs no periodic re-ranking: the key is fixed
    at submission and an index serves it. With aging off (``0``) priority dominates.
    """
    weight = aging_seconds if aging_seconds > 0 else NO_AGING_WEIGHT
    return eligible_at - priority * weight


@attrs.frozen
class NewTurnRequest:
    """What a submitter asks for. Unset fields are filled in from the group's policy."""

    source: str
    thread_id: str
    input: str = ""
    thread_group: str | None = None
    priority: int | None = None
    sender: str = "owner"
    channel: str | None = None
    agent: str | None = None
    dedupe_key: str | None = None
    not_before: float | None = None
    parent: str | None = None
    owner: str | None = None
    timeout_seconds: float | None = None
    meta: JSONDict = attrs.field(factory=dict)
    strategy: Strategy | None = None
    id: str | None = None
    """A caller-chosen id makes the submission idempotent: resubmitting it is a no-op."""


@attrs.frozen
class SubmitRules:
    """How the store treats one submission, resolved by the inbox from configuration."""

    thread_group: str
    priority: int
    strategy: Strategy = "enqueue"
    max_queued: int | None = None
    overflow: Overflow = "reject"
    aging_seconds: float = 60.0


@attrs.frozen
class GroupPolicy:
    """A thread group's admission defaults: the rules its submissions get unless the
    request or ``[scheduler.groups.<group>]`` says otherwise, and its running cap.

    A turn source declares its group's defaults when it registers
    (``register(name, factory, admission=GroupPolicy(...))``); a group nobody declared
    gets the inbox's generic fallback."""

    priority: int
    strategy: Strategy = "enqueue"
    max_running: int | None = None
    max_queued: int | None = None
    overflow: Overflow = "reject"


@attrs.frozen
class SubmitResult:
    """``status``: ``queued`` (a new row), ``coalesced`` (merged into ``id``, already
    queued) or ``exists`` (the caller-chosen id was already submitted).

    ``dropped`` lists requests removed by the overflow rule; ``interrupted`` the running
    turns asked to cancel by the ``interrupt`` strategy.
    """

    id: str
    status: Literal["queued", "coalesced", "exists"]
    dropped: tuple[str, ...] = ()
    interrupted: tuple[str, ...] = ()
    steer: bool = False


@attrs.frozen
class TurnRequest:
    """A stored turn request and, once it ran, its outcome."""

    id: str
    seq: int
    source: str
    thread_id: str
    thread_group: str
    priority: int
    rank: float
    input: str
    status: TurnStatus
    attempt: int
    created_at: float
    updated_at: float
    sender: str = "owner"
    channel: str | None = None
    agent: str | None = None
    dedupe_key: str | None = None
    not_before: float | None = None
    parent: str | None = None
    owner: str | None = None
    timeout_seconds: float | None = None
    meta: JSONDict = attrs.field(factory=dict)
    steer: bool = False
    started_at: float | None = None
    finished_at: float | None = None
    lease_owner: str | None = None
    lease_expires: float | None = None
    cancel_requested: bool = False
    output: str | None = None
    outcome: str | None = None
    """A machine-readable reason for the terminal status (``timeout``, ``lease_expired``…)."""
    error: str | None = None

    def with_input(self, text: str) -> TurnRequest:
        """This request with ``input`` replaced (``attrs.evolve``, a third of its cost:
        the scheduler does it for every turn)."""
        return self._with(
            text,
            self.status,
            finished_at=self.finished_at,
            output=self.output,
            outcome=self.outcome,
            error=self.error,
        )

    def ended(
        self,
        status: TurnStatus,
        *,
        finished_at: float | None,
        output: str | None,
        outcome: str | None,
        error: str | None,
        input: str | None = None,
    ) -> TurnRequest:
        """This request as it ended (``input`` replaced too, when given)."""
        text = self.input if input is None else input
        return self._with(
            text, status, finished_at=finished_at, output=output, outcome=outcome, error=error
        )

    def _with(
        self,
        input: str,
        status: TurnStatus,
        *,
        finished_at: float | None,
        output: str | None,
        outcome: str | None,
        error: str | None,
    ) -> TurnRequest:
        # Every field, in the order declared above (a test compares with attrs.evolve).
        return TurnRequest(
            self.id,
            self.seq,
            self.source,
            self.thread_id,
            self.thread_group,
            self.priority,
            self.rank,
            input,
            status,
            self.attempt,
            self.created_at,
            self.updated_at,
            self.sender,
            self.channel,
            self.agent,
            self.dedupe_key,
            self.not_before,
            self.parent,
            self.owner,
            self.timeout_seconds,
            self.meta,
            self.steer,
            self.started_at,
            finished_at,
            self.lease_owner,
            self.lease_expires,
            self.cancel_requested,
            output,
            outcome,
            error,
        )


def _written_out(text: str | None) -> str | None:
    """``text`` with each NUL written out
    (:func:`~toolang_core.store.json_text.nul_written_out`)."""
    return None if text is None else nul_written_out(text)


@attrs.frozen
class StepRecord:
    """One step of a turn (prompt build, model call, tool call, …).

    ``idempotency_key`` (for tool calls: turn id + call id) lets a resumed turn find a
    completed step instead of doing the work again. A tool call is stored twice: as an
    ``intent`` before the tool runs, then completed in place with its result
    (:meth:`ExecutionStore.complete_step`); an intent left without a result by a crash
    means the call is *in doubt*.
    """

    turn_id: str
    seq: int
    attempt: int
    kind: str
    status: StepStatus
    started_at: float
    finished_at: float
    data: JSONDict = attrs.field(factory=dict)
    error: str | None = attrs.field(default=None, converter=_written_out)
    """A NUL character in it is written out as ``\\x00`` (no store keeps one)."""
    idempotency_key: str | None = None

    def numbered(self, seq: int) -> StepRecord:
        """This step as stored under ``seq`` (``attrs.evolve`` at half the cost: a
        store numbers every step it writes)."""
        return StepRecord(
            self.turn_id,
            seq,
            self.attempt,
            self.kind,
            self.status,
            self.started_at,
            self.finished_at,
            self.data,
            self.error,
            self.idempotency_key,
        )


@attrs.frozen
class PastTurn:
    """What was said in an earlier turn of a thread (:meth:`ExecutionStore.thread_history`):
    what a prompt's history is made of, without the rest of the request."""

    seq: int
    created_at: float
    status: TurnStatus
    input: str
    output: str | None = None
    outcome: str | None = None


@attrs.frozen
class Finish:
    """The terminal state of one turn, for :meth:`ExecutionStore.finish_many`."""

    turn_id: str
    run_id: str
    attempt: int
    status: TurnStatus
    now: float
    output: str | None = attrs.field(default=None, converter=_written_out)
    """A NUL character in it is written out as ``\\x00``, as in ``error``: PostgreSQL's
    ``text`` cannot hold one, and a turn whose answer holds one finishes on every store."""
    outcome: str | None = None
    error: str | None = attrs.field(default=None, converter=_written_out)
    steps: tuple[StepRecord, ...] = ()
    """Final steps committed together with the terminal state (fenced the same way)."""
    records: tuple[RecordWrite, ...] = ()
    """Records written in the same transaction, only when the terminal state is
    recorded, each whatever its revision (as ``put_record`` without an expected one):
    a turn's prompt trace, with no commit of its own."""


@attrs.frozen
class RunRecord:
    """One runtime process lifetime."""

    id: str
    host: str
    pid: int
    version: str
    started_at: float
    heartbeat_at: float
    status: Literal["running", "stopped", "lost"] = "running"
    stopped_at: float | None = None
    plugins: tuple[JSONDict, ...] = ()


@attrs.frozen
class ThreadInfo:
    thread_id: str
    thread_group: str
    running_id: str | None
    head_id: str | None
    created_at: float
    updated_at: float
    turns: int
    owner: str | None = None
    """The owner of the thread's first request (``None``: the operator); see
    :mod:`toolang_core.store.owners`."""


@attrs.frozen
class GroupCount:
    thread_group: str
    status: TurnStatus
    count: int


@attrs.frozen
class Heartbeat:
    """What renewing a run's leases found: turns still owned, and those asked to cancel."""

    owned: frozenset[str]
    cancel_requested: frozenset[str]


@attrs.frozen
class Recovery:
    """What recovering expired leases did."""

    requeued: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    canceled: tuple[str, ...] = ()


@attrs.frozen
class CancelResult:
    """``changed`` maps each affected request (the target and its descendants) to its new
    status: ``canceled`` for ones that had not started, ``canceling`` for running ones."""

    id: str
    status: TurnStatus
    changed: Mapping[str, TurnStatus] = attrs.field(factory=dict)


@attrs.frozen
class Record:
    """A plugin's JSON document in the store, with a revision for optimistic updates."""

    kind: str
    key: str
    revision: int
    data: JSONDict
    updated_at: float


@attrs.frozen
class TurnFilter:
    """Which turn requests ``list_turns`` returns (newest first)."""

    thread_id: str | None = None
    status: tuple[TurnStatus, ...] = ()
    source: str | None = None
    parent: str | None = None
    owner: str | None = None
    limit: int = 50
    before_seq: int | None = None
