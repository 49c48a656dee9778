"""The methods of :class:`ExecutionStore` every backend does alike, written once.

A backend subclasses :class:`StoreBase` and writes in its own SQL the narrower
primitives these call: :meth:`StoreBase.claim_turns`, :meth:`StoreBase.finish_turns`,
:meth:`StoreBase.write_record` and :meth:`StoreBase.get_record`. The checks of the
arguments, the defaults and the errors are then the same for every backend.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import attrs

from toolang_core.store.errors import RecordConflict
from toolang_core.store.types import Finish, Record, TurnRequest, TurnStatus


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


class StoreBase(ABC):
    """Claims, finishes and plugin records around a backend's primitives."""

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

    @abstractmethod
    def write_record(
        self, kind: str, key: str, data: dict[str, Any], now: float, expect: int | None
    ) -> int | None:
        """Store ``data`` as the next revision of ``kind/key`` if it is at revision
        ``expect`` now (``None``: whatever it is, ``0``: absent); the new revision, or
        ``None`` when it is not."""

    @abstractmethod
    def get_record(self, kind: str, key: str) -> Record | None: ...
