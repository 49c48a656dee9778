"""Recurring submissions: which occurrence of a schedule is due, remembered in the store.

Turn sources on a schedule (chores, will) keep, per key, the schedule's anchor and the
last occurrence they handed over, as records of the execution store — so restarts,
crashes and several processes agree. A key seen for the first time only remembers its
newest past occurrence (it fires at its next one) — unless the source knows when the key
came to be (``since``: a chore added at run time), whose occurrences count from then;
occurrences missed while nothing ran come due as one.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from toolang_core.schedule import Schedule
from toolang_core.store.errors import RecordConflict
from toolang_core.store.protocol import ExecutionStore


class Recurring:
    """Occurrence bookkeeping for one source (records of kind ``kind``).

    Every write is conditional on the revision read (compare-and-set), so when several
    runtimes share one store (``toolang-store-postgres``) each occurrence is handed over
    by exactly one of them: a process that loses the race re-reads, and finds the
    occurrence already taken."""

    def __init__(
        self, store: ExecutionStore, kind: str, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self.kind = kind
        self.clock = clock

    def _read(self, key: str) -> tuple[dict[str, float | None], int]:
        """The key's state and the revision to expect when writing it (0: none yet)."""
        record = self.store.get_record(self.kind, key)
        if record is None:
            return {}, 0
        return dict(record.data), record.revision

    def _write(self, key: str, state: dict[str, float | None], revision: int) -> bool:
        """Write ``state`` if the record is still at ``revision``; False if another
        process wrote it first."""
        try:
            self.store.put_record(self.kind, key, state, now=self.clock(), expect_revision=revision)
        except RecordConflict:
            return False
        return True

    def anchor(self, key: str) -> float:
        """The key's anchor: when it was first seen (kept from then on, the first
        writer's when several processes see it at once)."""
        while True:
            state, revision = self._read(key)
            if state.get("anchor") is not None:
                return float(state["anchor"])  # type: ignore[arg-type]
            anchor = self.clock()
            state["anchor"] = anchor
            if self._write(key, state, revision):
                return anchor

    def last(self, key: str) -> float | None:
        value = self._read(key)[0].get("last_occurrence")
        return None if value is None else float(value)

    def due(
        self,
        key: str,
        schedule: Schedule,
        *,
        paused: bool = False,
        since: float | None = None,
    ) -> tuple[float, float | None] | None:
        """``(occurrence, previous)`` when a new occurrence is due, remembering it as
        handed over; ``None`` otherwise — also when another process sharing the store
        handed it over first (the caller then must not submit it).

        ``since`` is when the key came to be, if known (a chore added at run time: when
        it was added): its occurrences count from then, not from when this source first
        saw the key — the first one after ``since`` fires even if the source learned of
        the key later. Without it, a key seen for the first time fires at its next
        occurrence."""
        while True:
            now = self.clock()
            latest = schedule.latest(now)
            state, revision = self._read(key)
            first_sight = "seen" not in state
            if first_sight:
                counted = latest if since is None else schedule.latest(min(since, now))
                state.update(seen=now, last_occurrence=counted)
            previous = state.get("last_occurrence")
            if paused or latest is None or (previous is not None and latest <= previous):
                if first_sight:
                    self._write(key, state, revision)  # lost: another process saw it too
                return None
            state["last_occurrence"] = latest
            if self._write(key, state, revision):
                return latest, previous
            # Another process wrote the key between our read and write: read again —
            # it most likely handed this very occurrence over.
