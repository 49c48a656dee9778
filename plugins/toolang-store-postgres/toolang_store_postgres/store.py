"""The shared execution store: PostgreSQL through psycopg 3 and a connection pool."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

import psycopg
import structlog
from psycopg import errors as pg_errors
from psycopg.types.json import Jsonb

from toolang_core import new_id
from toolang_core.store import (
    CancelResult,
    Finish,
    GroupCount,
    Heartbeat,
    NewTurnRequest,
    Record,
    Recovery,
    RunRecord,
    StepRecord,
    SubmitResult,
    SubmitRules,
    ThreadInfo,
    TurnFilter,
    TurnRequest,
    TurnStatus,
    Usage,
    UsageFilter,
    is_own,
)
from toolang_core.store.backend import (
    RUN_COLUMNS,
    ClaimRequest,
    StoreBase,
    check_active_status,
    finished_records,
    new_run_values,
    new_turn_values,
    run_from_row,
    stored_text,
    turn_filter_sql,
    turn_from_row,
    wrong_group,
    wrong_owner,
)
from toolang_store_postgres import ingress, records, schema, signals, turns, usage
from toolang_store_postgres.connection import ATTEMPTS, Conn, Database
from toolang_store_postgres.settings import describe_dsn
from toolang_store_postgres.steps import TurnSteps
from toolang_store_postgres.wake import KEEPALIVES, RUNTIME_PRESENT_SQL, NotifyWaker, Presence

if TYPE_CHECKING:
    from toolang_core import TurnSignal

log = structlog.get_logger("toolang.store.postgres")


class PostgresStore(StoreBase):
    """The execution store in one PostgreSQL schema, shared by any number of runtimes on
    any number of machines (``exclusive = False``).

    Every method is one short transaction on a pooled connection. Times are the
    callers' clocks (POSIX seconds), as the contract says: nodes must keep their clocks
    synchronised (NTP) to well within a lease; ``begin_run`` warns about a skewed one.

    ``read_only=True`` never creates or migrates anything and refuses writes (for
    ``toolang status`` and friends).
    """

    name = "postgres"
    exclusive = False

    def __init__(
        self,
        dsn: str,
        *,
        schema_name: str = "toolang",
        read_only: bool = False,
        pool_size: int = 4,
        connect_timeout: float = 10.0,
    ) -> None:
        self.names = schema.Names(schema_name)
        self.location = describe_dsn(dsn, schema_name)
        self.read_only = read_only
        self._db = Database(
            dsn,
            self.names,
            location=self.location,
            read_only=read_only,
            pool_size=pool_size,
            connect_timeout=connect_timeout,
        )
        self._presence = Presence(self._db.session, self.names)
        self._steps = TurnSteps(self._db)
        self._signals_to: Callable[[str, Sequence[TurnSignal]], None] | None = None
        try:
            with self._db.connection() as conn:
                schema.prepare(conn, self.names, self.location, migrate=not read_only)
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        self._presence.release()
        self._db.close()

    def acquire(self, run_id: str, *, wait_seconds: float = 0.0) -> None:
        """Shared: never refuses. Holds the presence lock that ``runtime_running`` sees."""
        try:
            self._presence.hold()
        except psycopg.Error as exc:
            raise self._db.unavailable(exc) from None

    def runtime_running(self) -> bool:
        """Whether any runtime (on any machine) serves this schema right now."""
        row = self._db.one(RUNTIME_PRESENT_SQL, (self.names.admin_key,))
        return bool(row[0])

    def listen(self) -> NotifyWaker:
        return NotifyWaker(lambda: self._db.session(**KEEPALIVES), self.names, self._signals_to)

    def send_turn_signals(self, sender: str, batch: Sequence[TurnSignal]) -> None:
        """:class:`toolang_core.TurnSignalBus`: ``batch`` in one transaction."""
        payloads = signals.encode(sender, batch)
        if payloads:
            with self._db.connection() as conn:
                conn.execute(signals.SEND_SQL, (self.names.signal_channel, payloads))

    def receive_turn_signals(
        self, deliver: Callable[[str, Sequence[TurnSignal]], None] | None
    ) -> None:
        """:class:`toolang_core.TurnSignalBus`: wakers made by :meth:`listen` from now
        on hand turn signals to ``deliver``."""
        self._signals_to = deliver

    def wake(self) -> None:
        with self._db.connection() as conn:
            conn.execute("SELECT pg_notify(%s, 'wake')", (self.names.channel,))

    # -- runs --------------------------------------------------------------------------

    def begin_run(self, run: RunRecord) -> None:
        row = self._db.one(
            "INSERT INTO {s}.runs (id, host, pid, version, started_at, heartbeat_at, status, "
            "plugins) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
            "RETURNING extract(epoch FROM clock_timestamp())::float8",
            (*new_run_values(run), Jsonb(list(run.plugins))),
        )
        skew = run.started_at - row[0]
        if abs(skew) > 1.0:
            log.warning(
                "store.clock_skew",
                host=run.host,
                skew_seconds=round(skew, 3),
                hint="leases compare the clocks of every node: synchronise them (NTP)",
            )

    def heartbeat(self, run_id: str, *, now: float, lease_expires: float) -> Heartbeat:
        self._presence_check()
        return self._db.tx(
            lambda c: turns.heartbeat(c, self.names, run_id, now=now, lease_expires=lease_expires)
        )

    def _presence_check(self) -> None:
        """Retake the presence lock after a lost connection (cheap when held)."""
        if self._presence.wanted:
            try:
                self._presence.hold()
            except psycopg.Error as exc:
                log.warning("store.presence_lost", error=type(exc).__name__)

    def end_run(self, run_id: str, *, now: float, status: str = "stopped") -> None:
        self._db.rowcount(
            "UPDATE {s}.runs SET status = %s, stopped_at = %s, heartbeat_at = %s WHERE id = %s",
            (status, now, now, run_id),
        )

    def mark_lost_runs(self, *, now: float, stale_before: float, exclude: str) -> list[str]:
        rows = self._db.all(
            "UPDATE {s}.runs SET status = 'lost', stopped_at = heartbeat_at WHERE status = "
            "'running' AND id <> %s AND heartbeat_at < %s RETURNING id",
            (exclude, stale_before),
        )
        return [r[0] for r in rows]

    def list_runs(self, limit: int = 20) -> list[RunRecord]:
        rows = self._db.all(
            f"SELECT {RUN_COLUMNS} FROM {{s}}.runs ORDER BY started_at DESC LIMIT %s", (limit,)
        )
        return [run_from_row(r) for r in rows]

    # -- inbox and the turn lifecycle ---------------------------------------------------

    def submit(self, request: NewTurnRequest, rules: SubmitRules, *, now: float) -> SubmitResult:
        if ingress.is_simple(request, rules):
            turn_id = new_id()
            values = new_turn_values(request, rules, turn_id, now)
            params = (*ingress.insert_params(values, request.meta), self.names.channel)
            try:
                with self._db.connection() as conn:
                    conn.execute(self.names(ingress.INSERT_AND_NOTIFY_SQL), params)
            except psycopg.Error as exc:
                if exc.sqlstate == ingress.WRONG_OWNER:
                    raise wrong_owner(request) from None
                if exc.sqlstate != ingress.WRONG_GROUP:
                    raise
                # another owner's thread first, whatever its group (as plan_submit decides)
                thread = self.thread(request.thread_id)
                if thread is not None and not is_own(thread.owner, request.owner):
                    raise wrong_owner(request) from None
                actual = exc.diag.message_detail
                raise wrong_group(request, rules, actual) from None
            return SubmitResult(turn_id, "queued")
        try:
            return self._db.tx(
                lambda c: ingress.submit(c, self.names, request, rules, new_id=new_id(), now=now),
                notify="submit",
            )
        except pg_errors.UniqueViolation:
            if request.id is not None and self.get(request.id) is not None:
                return SubmitResult(request.id, "exists")  # submitted at the same moment
            raise

    def claim_turns(self, claim: ClaimRequest) -> list[TurnRequest]:
        groups = sorted(claim.caps)
        params = (
            claim.run_id,
            claim.limit,
            claim.now,
            claim.lease_seconds,
            groups,
            [claim.caps[g] for g in groups],
            None if claim.only is None else list(claim.only),
        )

        def start(c: Conn) -> list[TurnRequest]:
            return [turn_from_row(r) for r in c.execute(self.names(turns.CLAIM_SQL), params)]

        for attempt in range(ATTEMPTS):
            try:
                # One statement (the claim function), so its own transaction: no
                # BEGIN/COMMIT round trips around it.
                return self._db.single(start)
            except pg_errors.UniqueViolation:
                # The one-active-turn-per-thread index refused a start: some claim raced
                # past the thread lock. Nothing was changed; look again.
                log.warning("store.claim_conflict", attempt=attempt + 1)
        return []

    def set_active_status(
        self, turn_id: str, *, run_id: str, attempt: int, status: TurnStatus, now: float
    ) -> bool:
        check_active_status(status)
        params = (status.value, now, turn_id, run_id, attempt)
        return self._db.rowcount(turns.SET_ACTIVE_SQL, params) == 1

    def resume_parked(
        self, turn_id: str, *, run_id: str, attempt: int, cap: int | None, now: float
    ) -> bool | None:
        def resume(c: Conn) -> bool | None:
            row = c.execute(self.names(turns.PARKED_GROUP_SQL), (turn_id, run_id, attempt))
            parked = row.fetchone()
            if parked is None:
                return None
            if cap is not None:
                # The claims of this group count and start under this lock: one of
                # them and this resume never both take the last slot.
                c.execute(self.names(turns.GROUP_LOCK_SQL), (parked[0],))
                holding = c.execute(self.names(turns.HOLDING_IN_GROUP_SQL), (parked[0],))
                count = holding.fetchone()
                if count is not None and count[0] >= cap:
                    return False
            c.execute(self.names(turns.RESUME_SQL), (now, turn_id))
            return True

        return self._db.tx(resume)

    def finish_turns(self, items: Sequence[Finish]) -> list[bool]:
        def write(c: Conn) -> list[bool]:
            ids = [i.turn_id for i in items]
            c.execute(self.names(turns.LOCK_THREADS_OF_SQL), (ids,))
            done = c.execute(
                self.names(turns.FINISH_MANY_SQL), turns.finish_many_params(items)
            ).fetchall()
            finished = {row[0] for row in done}
            recorded = [turn_id in finished for turn_id in ids]
            records.put(c, self.names, finished_records(items, recorded))
            return recorded

        return self._db.tx(write)

    def release(
        self, turn_id: str, *, run_id: str, attempt: int, now: float, max_attempts: int
    ) -> bool:
        params = {
            "now": now,
            "max": max_attempts,
            "turn": turn_id,
            "run": run_id,
            "attempt": attempt,
        }

        def write(c: Conn) -> bool:
            c.execute(self.names(turns.LOCK_THREAD_OF_SQL), (turn_id,))
            cursor = c.execute(self.names(turns.RELEASE_SQL), params)
            return cursor.rowcount == 1

        return self._db.tx(write, notify="release")

    def recover(
        self, *, now: float, max_attempts: int, dead_runs: Collection[str] = ()
    ) -> Recovery:
        with self._db.connection() as conn:  # the common case: nothing expired, one read
            expired = conn.execute(self.names(turns.EXPIRED_SQL), (now, list(dead_runs))).fetchone()
        if expired is None:
            return Recovery()
        return self._db.tx(
            lambda c: turns.recover(
                c, self.names, now=now, max_attempts=max_attempts, dead_runs=dead_runs
            ),
            notify="recover",
        )

    def cancel(self, turn_id: str, *, now: float, reason: str = "canceled") -> CancelResult:
        reason = stored_text(reason)  # (a NUL written out, as every store keeps text)
        return self._db.tx(
            lambda c: turns.cancel(c, self.names, turn_id, now, reason=reason), notify="cancel"
        )

    def cancel_requests(self, run_id: str) -> frozenset[str]:
        rows = self._db.all(
            "SELECT id FROM {s}.turn_requests WHERE lease_owner = %s AND status IN {active} "
            "AND status = 'canceling' AND cancel_requested",
            (run_id,),
        )
        return frozenset(r[0] for r in rows)

    def take_steer(
        self, turn_id: str, *, run_id: str, attempt: int, now: float
    ) -> list[TurnRequest]:
        waiting = self._db.one(turns.STEERING_WAITS_SQL, (turn_id, run_id, attempt))
        if not waiting[0]:  # nothing to take, or the turn is no longer ours
            return []
        return self._db.tx(
            lambda c: turns.take_steer(
                c, self.names, turn_id, run_id=run_id, attempt=attempt, now=now
            )
        )

    # -- steps (steps.py) ----------------------------------------------------------------

    def record_step(self, step: StepRecord, *, run_id: str) -> StepRecord | None:
        return self._steps.record(step, run_id)

    def insert_steps(self, steps: Sequence[StepRecord], run_id: str) -> list[StepRecord]:
        return self._steps.insert(steps, run_id)

    def complete_step(self, step: StepRecord, *, run_id: str) -> StepRecord | None:
        return self._steps.complete(step, run_id)

    def steps(self, turn_id: str) -> list[StepRecord]:
        return self._steps.of_turn(turn_id)

    def find_step(self, idempotency_key: str) -> StepRecord | None:
        return self._steps.find(idempotency_key)

    # -- queries -------------------------------------------------------------------------

    def get(self, turn_id: str) -> TurnRequest | None:
        row = self._db.one("SELECT {columns} FROM {s}.turn_requests WHERE id = %s", (turn_id,))
        return None if row is None else turn_from_row(row)

    def list_turns(self, where: TurnFilter | None = None) -> list[TurnRequest]:
        condition, params = turn_filter_sql(where or TurnFilter(), "%s")
        rows = self._db.all("SELECT {columns} FROM {s}.turn_requests" + condition, params)
        return [turn_from_row(r) for r in rows]

    def delete_turns(self, turn_ids: Collection[str]) -> list[str]:
        ids = list(dict.fromkeys(turn_ids))
        if not ids:
            return []
        return self._db.tx(lambda c: turns.delete_terminal(c, self.names, ids))

    _THREAD_COLUMNS = (
        "thread_id, thread_group, running_id, head_id, created_at, updated_at, turns, owner"
    )

    def thread(self, thread_id: str) -> ThreadInfo | None:
        row = self._db.one(
            f"SELECT {self._THREAD_COLUMNS} FROM {{s}}.threads WHERE thread_id = %s", (thread_id,)
        )
        return None if row is None else ThreadInfo(*row)

    def list_threads(self, limit: int = 50) -> list[ThreadInfo]:
        rows = self._db.all(
            f"SELECT {self._THREAD_COLUMNS} FROM {{s}}.threads ORDER BY updated_at DESC LIMIT %s",
            (limit,),
        )
        return [ThreadInfo(*r) for r in rows]

    def usage(self, where: UsageFilter) -> Usage:
        return usage.total(self._db.one(*usage.total_sql(where)))

    def usage_by_owner(self, where: UsageFilter) -> dict[str, Usage]:
        return usage.by_owner(self._db.all(*usage.by_owner_sql(where)))

    def counts(self) -> list[GroupCount]:
        rows = self._db.all(
            "SELECT thread_group, status, count(*) FROM {s}.turn_requests "
            "GROUP BY thread_group, status ORDER BY thread_group, status"
        )
        return [GroupCount(g, TurnStatus(s), n) for g, s, n in rows]

    def group_load(self) -> dict[str, tuple[int, int]]:
        """``group -> (running, queued)``, counted on the partial indexes of open requests
        (running: the turns holding a slot; a turn awaiting approval holds none)."""
        rows = self._db.all(
            "SELECT thread_group, sum((status IN ('running', 'canceling'))::int), "
            "sum((status = 'queued')::int) "
            "FROM {s}.turn_requests WHERE status = 'queued' OR status IN {active} "
            "GROUP BY thread_group"
        )
        return {group: (int(running), int(queued)) for group, running, queued in rows}

    def next_wakeup(self, *, now: float) -> float | None:
        row = self._db.one(
            "SELECT MIN(head_not_before) FROM {s}.threads WHERE running_id IS NULL "
            "AND head_id IS NOT NULL AND head_not_before > 0 AND head_not_before > %s",
            (now,),
        )
        return row[0] if row and row[0] is not None else None

    # -- plugin records (records.py) --------------------------------------------------------

    def get_record(self, kind: str, key: str) -> Record | None:
        return records.get(self._db, kind, key)

    def write_record(
        self, kind: str, key: str, data: dict[str, Any], now: float, expect: int | None
    ) -> int | None:
        return records.write(self._db, kind, key, data, now=now, expect=expect)

    def write_records(self, rows: Sequence[tuple[str, str, dict[str, Any], float]]) -> None:
        self._db.tx(lambda c: records.put(c, self.names, rows))

    def list_records(self, kind: str) -> list[Record]:
        return records.of_kind(self._db, kind)

    def delete_record(self, kind: str, key: str) -> bool:
        return records.delete(self._db, kind, key)
