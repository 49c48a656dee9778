"""Which runtime does the upkeep when several share one store.

Upkeep (:mod:`.upkeep`: task-run and approval sweeps, remote-agent pings, team repairs)
acts on the store's shared state, so on a shared store (``toolang-store-postgres``) one
runtime at a time does it: the holder of a lease kept as a store record, renewed at each
upkeep and taken over by another runtime once it has not been renewed for
``lease_seconds`` (the holder died or stalled). Every write names the revision read
(compare-and-set), so two runtimes reaching for an expired lease at once cannot both get
it. An exclusive store (SQLite) has one runtime: it always holds the lease.

Its reads and writes are store calls like the scheduler's heartbeat, made where that one
is made: on the runtime's event loop, as the store contract says (store methods are
synchronous and short; :mod:`toolang_core.store.protocol`). A backend may count on that,
so they are not handed to another thread.
"""

from __future__ import annotations

import contextlib

import attrs

from toolang_core.store.errors import RecordConflict
from toolang_core.store.protocol import ExecutionStore

KIND = "runtime.upkeep"
KEY = "lease"


@attrs.define
class UpkeepLease:
    """The upkeep lease as seen by one runtime (``run_id``)."""

    store: ExecutionStore
    run_id: str
    lease_seconds: float

    def take(self, now: float) -> bool:
        """Take or renew the lease; True when this runtime holds it until
        ``now + lease_seconds`` and should do the upkeep now."""
        if self.store.exclusive:
            return True
        record = self.store.get_record(KIND, KEY)
        if record is not None:
            holder = record.data.get("holder")
            until = float(record.data.get("until") or 0.0)
            if holder != self.run_id and until > now:
                return False
        data = {"holder": self.run_id, "until": now + self.lease_seconds, "taken_at": now}
        try:
            self.store.put_record(
                KIND, KEY, data, now=now, expect_revision=0 if record is None else record.revision
            )
        except RecordConflict:
            return False  # another runtime took or renewed it since we read it
        return True

    def release(self, now: float) -> None:
        """Give the lease up (a runtime stopping): another runtime takes it at its next
        upkeep instead of after ``lease_seconds``."""
        if self.store.exclusive:
            return
        record = self.store.get_record(KIND, KEY)
        if record is None or record.data.get("holder") != self.run_id:
            return
        data = {**record.data, "until": now}
        with contextlib.suppress(RecordConflict):  # taken over meanwhile: nothing to give
            self.store.put_record(KIND, KEY, data, now=now, expect_revision=record.revision)

    def holder(self, now: float) -> str | None:
        """The run holding the lease now, if any (for ``status`` and tests)."""
        record = self.store.get_record(KIND, KEY)
        if record is None or float(record.data.get("until") or 0.0) <= now:
            return None
        holder = record.data.get("holder")
        return str(holder) if holder is not None else None
