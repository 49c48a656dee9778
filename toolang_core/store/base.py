"""The methods of :class:`ExecutionStore` every backend does alike, written once.

A backend subclasses :class:`StoreBase` and writes in its own SQL the narrower
primitives these call: :meth:`StoreBase.claim_turns`, :meth:`StoreBase.finish_turns`,
:meth:`StoreBase.write_record` and :meth:`StoreBase.get_record`. The checks of the
arguments, the defaults and the errors are then the same for every backend.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from toolang_core.store.errors import RecordConflict
from toolang_core.store.types import (
    Finish,
    PastTurn,
    Record,
    RecordWrite,
    StepRecord,
    TurnFilter,
    TurnRequest,
    TurnStatus,
)

if TYPE_CHECKING:
    from toolang_core.tools.approval_seal import ApprovalKeyFile


@attrs.frozen
class ClaimRequest:
    """The arguments of one :meth:`ExecutionStore.claim` (``limit`` is at least 1)."""

    run_id: str
    limit: int
    now: float
    lease_seconds: float
    caps: Mapping[str, int]
    only: Collection[str] | None = None


def check_active_status(status: TurnStatus) -> None:
    """:raises ValueError: ``status`` is not one an active turn may move to."""
    if status not in (TurnStatus.RUNNING, TurnStatus.AWAITING_APPROVAL):
        raise ValueError(f"an active turn can move to running or awaiting_approval, not {status}")


def check_finish_status(status: TurnStatus) -> None:
    """:raises ValueError: ``status`` is not terminal."""
    if not status.is_terminal:
        raise ValueError(f"finish needs a terminal status, not {status.value!r}")


class FencedOut(Exception):
    """Rolls back a write of steps whose turn this run no longer holds."""


StepInsert = Callable[[StepRecord], "int | StepRecord | None"]
"""A backend's insert of one step inside its transaction: the new ``seq``, the step
stored before under the same idempotency key (a replay), or ``None`` (fenced out)."""


def finished_records(
    items: Sequence[Finish], recorded: Sequence[bool]
) -> list[tuple[str, str, dict[str, Any], float]]:
    """``(kind, key, data, now)`` of the records of the finishes recorded (one flag per
    item, as ``finish_turns`` answers), to write in the same transaction."""
    return [
        (kind, key, dict(data), item.now)
        for item, done in zip(items, recorded, strict=True)
        if done
        for kind, key, data in item.records
    ]


def insert_each(steps: Sequence[StepRecord], insert: StepInsert) -> list[StepRecord]:
    """Insert ``steps`` in order with ``insert``; what each became.

    :raises FencedOut: when one is fenced out (the caller rolls all of them back)."""
    stored = []
    for step in steps:
        done = insert(step)
        if done is None:
            raise FencedOut
        stored.append(done if isinstance(done, StepRecord) else step.numbered(done))
    return stored


def numbered_together(
    steps: Sequence[StepRecord], rows: Sequence[Sequence[Any]]
) -> list[StepRecord]:
    """``steps`` numbered by the sequence numbers (first column of ``rows``) that one
    statement inserting them together returned, in order.

    :raises FencedOut: when it returned none (this run does not hold the turn)."""
    if not rows:
        raise FencedOut
    seqs = sorted(int(row[0]) for row in rows)
    return [step.numbered(seq) for step, seq in zip(steps, seqs, strict=True)]


class StoreBase(ABC):
    """Claims, finishes and plugin records around a backend's primitives."""

    approval_key: ApprovalKeyFile | None = None
    """Where the key that seals approval decisions is, bound by the runtime that opened
    this store (:func:`~toolang_core.runtime.open_store.open_store`); an
    :class:`~toolang_core.tools.approvals.ApprovalBook` over the store uses it."""

    def record_steps(self, steps: Sequence[StepRecord], *, run_id: str) -> list[StepRecord] | None:
        """Store several steps of one turn in one fenced transaction: all, or (fenced
        out) none and ``None``; a replayed idempotency key gives the stored step."""
        if not steps:
            return []
        try:
            return self.insert_steps(steps, run_id)
        except FencedOut:
            return None

    @abstractmethod
    def list_turns(self, where: TurnFilter | None = None) -> list[TurnRequest]: ...

    def thread_history(self, thread_id: str, *, before_seq: int, limit: int) -> list[PastTurn]:
        """From :meth:`list_turns`; a backend may read just these columns instead."""
        earlier = self.list_turns(
            TurnFilter(thread_id=thread_id, before_seq=before_seq, limit=limit)
        )
        return [
            PastTurn(t.seq, t.created_at, t.status, t.input, t.output, t.outcome) for t in earlier
        ]

    @abstractmethod
    def insert_steps(self, steps: Sequence[StepRecord], run_id: str) -> list[StepRecord]:
        """Insert ``steps`` in one transaction with :func:`insert_each` (which raises
        :class:`FencedOut` to roll them back)."""

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
        if limit <= 0:
            return []
        return self.claim_turns(ClaimRequest(run_id, limit, now, lease_seconds, caps, only))

    @abstractmethod
    def claim_turns(self, claim: ClaimRequest) -> list[TurnRequest]:
        """Start and return the turns :meth:`ExecutionStore.claim` describes."""

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
        item = Finish(turn_id, run_id, attempt, status, now, output, outcome, error)
        return self.finish_many([item])[0]

    def finish_many(self, items: Sequence[Finish]) -> list[bool]:
        for item in items:
            check_finish_status(item.status)
        return self.finish_turns(items) if items else []

    @abstractmethod
    def finish_turns(self, items: Sequence[Finish]) -> list[bool]:
        """Record the terminal states (checked, at least one) of ``finish_many``."""

    def put_record(
        self,
        kind: str,
        key: str,
        data: Mapping[str, Any],
        *,
        now: float,
        expect_revision: int | None = None,
    ) -> Record:
        values = dict(data)
        revision = self.write_record(kind, key, values, now, expect_revision)
        if revision is None:
            current = self.get_record(kind, key)
            raise RecordConflict(
                f"record {kind}/{key} is at revision {current.revision if current else 0}, "
                f"expected {expect_revision}"
            )
        return Record(kind, key, revision, values, now)

    def put_records(self, items: Sequence[RecordWrite], *, now: float) -> None:
        if items:
            self.write_records([(kind, key, dict(data), now) for kind, key, data in items])

    @abstractmethod
    def write_records(self, rows: Sequence[tuple[str, str, dict[str, Any], float]]) -> None:
        """Store each ``(kind, key, data, now)`` of ``rows`` (at least one) as its
        record's next revision, whatever it is now, in one transaction."""

    @abstractmethod
    def write_record(
        self, kind: str, key: str, data: dict[str, Any], now: float, expect: int | None
    ) -> int | None:
        """Store ``data`` as the next revision of ``kind/key`` if it is at revision
        ``expect`` now (``None``: whatever it is, ``0``: absent); the new revision, or
        ``None`` when it is not."""

    @abstractmethod
    def get_record(self, kind: str, key: str) -> Record | None: ...
