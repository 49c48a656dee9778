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
from toolang_core.store.protocol import ExecutionStore


class Recurring:
    """Occurrence bookkeeping for one source (records of kind ``kind``)."""

    def __init__(
        self, store: ExecutionStore, kind: str, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self.kind = kind
        self.clock = clock

    def _state(self, key: str) -> dict[str, float | None]:
        record = self.store.get_record(self.kind, key)
        return dict(record.data) if record else {}

    def _save(self, key: str, state: dict[str, float | None]) -> None:
        self.store.put_record(self.kind, key, state, now=self.clock())

    def anchor(self, key: str) -> float:
        """The key's anchor: when it was first seen (kept from then on)."""
        state = self._state(key)
        if state.get("anchor") is None:
            state["anchor"] = self.clock()
            self._save(key, state)
        return float(state["anchor"])  # type: ignore[arg-type]

    def last(self, key: str) -> float | None:
        value = self._state(key).get("last_occurrence")
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
        handed over; ``None`` otherwise.

        ``since`` is when the key came to be, if known (a chore added at run time: when
        it was added): its occurrences count from then, not from when this source first
        saw the key — the first one after ``since`` fires even if the source learned of
        the key later. Without it, a key seen for the first time fires at its next
        occurrence."""
        now = self.clock()
        latest = schedule.latest(now)
        state = self._state(key)
        first_sight = "seen" not in state
        if first_sight:
            counted = latest if since is None else schedule.latest(min(since, now))
            state.update(seen=now, last_occurrence=counted)
        previous = state.get("last_occurrence")
        if paused or latest is None or (previous is not None and latest <= previous):
            if first_sight:
                self._save(key, state)
            return None
        state["last_occurrence"] = latest
        self._save(key, state)
        return latest, previous
