"""The embedded execution store: one SQLite file in WAL mode, shipped in core."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from toolang_core.ids import new_id
from toolang_core.store.base import (
    ClaimRequest,
    StoreBase,
    check_active_status,
    finished_records,
    insert_each,
)
from toolang_core.store.errors import StoreCorrupt, StoreError, StoreReplaced
from toolang_core.store.json_text import dumps, dumps_data, nul_written_out as stored_text
from toolang_core.store.rows import (
    RECORD_COLUMNS,
    RUN_COLUMNS,
    TURN_COLUMNS,
    new_run_values,
    new_turn_values,
    record_from_row,
    run_from_row,
    turn_filter_sql,
    turn_from_row,
)
from toolang_core.store.sqlite import admission, finishing, steps, turns, usage
from toolang_core.store.sqlite.checkpoint import BUSY_INTERVAL, WalCheckpointer, local_writers
from toolang_core.store.sqlite.connection import SYNCHRONOUS, connect, prepare_schema, use_wal
from toolang_core.store.sqlite.damage import is_busy, probe_btrees, quick_check, verify_once
from toolang_core.store.sqlite.guard import StoreFiles, abandon
from toolang_core.store.sqlite.lock import RuntimeLock
from toolang_core.store.sqlite.schema import active
from toolang_core.store.sqlite.wake import SocketWaker, WakeSender, wake_address
from toolang_core.store.submit_plan import plain_enqueue
from toolang_core.store.types import (
    CancelResult,
    Finish,
    GroupCount,
    Heartbeat,
    NewTurnRequest,
    PastTurn,
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
)
from toolang_core.store.usage import Usage, UsageFilter

T = TypeVar("T")
_STATUS = {s.value: s for s in TurnStatus}


class SQLiteStore(StoreBase):
    """The execution store in one SQLite file (default ``<home>/toolang.db``).

    WAL mode; writes are short ``BEGIN IMMEDIATE`` transactions. ``synchronous``
    ``normal`` survives a crash of any process; ``full`` also a power loss, at about a
    quarter of the write rate. One runtime at a time may own the file (an OS lock the
    kernel frees with the process, see lock.py); any number of processes may submit,
    cancel and read. The owner watches the files (guard.py): one deleted or replaced
    under it makes every later write raise :class:`StoreReplaced`.

    ``read_only=True`` opens the file without writing anything: no migration, no WAL
    switch (for ``toolang status`` and friends).
    """

    name = "sqlite"
    exclusive = True

    def __init__(
        self,
        path: Path,
        *,
        read_only: bool = False,
        synchronous: str = "normal",
        busy_timeout: float = 10.0,
    ) -> None:
        if synchronous not in SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS)}")
        self.path = path
        self.location = str(path)
        self.read_only = read_only
        self._conn = connect(
            path, read_only=read_only, synchronous=synchronous, busy_timeout=busy_timeout
        )
        try:
            probe_btrees(self._conn, path)  # before a migration could write into it
            prepare_schema(self._conn, path, migrate=not read_only)
            if not read_only:
                use_wal(self._conn, path, wait_seconds=busy_timeout)
        except BaseException:
            self._conn.close()
            raise
        self._wake = wake_address(path)
        self._waker = WakeSender(self._wake)
        self._lock = RuntimeLock(path)
        self._synchronous = synchronous
        self._checkpointer: WalCheckpointer | None = None
        self._writers = local_writers(path)
        self._hold = self._writers.writing  # held around every write (see checkpoint.py)
        self._files: StoreFiles | None = None
        """Watched once this store is a runtime's (``acquire``)."""
        self._verified = False
        """Whether ``PRAGMA quick_check`` passed (before the first write: ``_verify``)."""
        if not read_only:
            self._writers.join(self)

    # -- plumbing ----------------------------------------------------------------------

    def _guard(self, *, force: bool = False) -> None:
        """Before a write. :raises StoreCorrupt: the file is damaged (checked before this
        object's first write). :raises StoreReplaced: when a file of the store was deleted
        or replaced under this runtime (checked at most every 0.25 s, unless ``force``)."""
        if not self._verified:
            self._verify()
        files = self._files
        if files is None or (files.problem is None and files.check(force=force) is None):
            return
        if files.rescue_note is None:  # the first time: save what this runtime sees
            if self._checkpointer is not None:  # copy nothing more into a file in doubt
                abandon(self._checkpointer.stop(close=False))
                self._checkpointer = None
            with self._hold:
                files.rescue(self._conn)
        raise files.error()

    def replaced(self) -> StoreReplaced | None:
        """The error to stop with when a file of the store was deleted or replaced under
        this runtime (looked at now), else ``None``. A read that met a "malformed" page
        asks this first: another process's new files under the old names are what the
        old connection then reads, not a damaged store."""
        if self._files is None:
            return None
        try:
            self._guard(force=True)
        except StoreReplaced as exc:
            return exc
        return None

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        self._may_write()
        c = self._conn
        with self._hold:
            try:
                c.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreError(f"{self.path}: cannot start a write ({exc})") from None
            try:
                yield c
            except BaseException:
                c.execute("ROLLBACK")
                raise
            c.execute("COMMIT")

    def _may_write(self) -> None:
        """Before a write. :raises StoreError: open read-only; what :meth:`_guard` raises."""
        if self.read_only:
            raise StoreError(f"{self.path} is open read-only")
        self._guard()

    def _write_one(self, sql: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
        """One statement, its own transaction."""
        self._guard()
        with self._hold:
            return self._conn.execute(sql, params)

    def set_autocheckpoint(self, pages: int) -> None:
        """Called by this process's :class:`LocalWriters` of the file."""
        self._conn.execute(f"PRAGMA wal_autocheckpoint = {int(pages)}")

    def _tx(self, fn: Callable[[sqlite3.Connection], T], *, wake: bool = False) -> T:
        with self._write() as c:
            result = fn(c)
        if wake:
            self._waker.send()
        return result

    def close(self) -> None:
        # Files deleted or replaced meanwhile: closing the last connection would copy
        # into, or delete, files that are not this runtime's any more (guard.py).
        broken = self._files is not None and self._files.check(force=True) is not None
        if self._checkpointer is not None:
            kept = self._checkpointer.stop(close=not broken)
            if broken:
                abandon(kept)
            self._checkpointer = None
        self._writers.leave(self)
        self._lock.release()
        self._waker.close()
        if broken:
            abandon(self._conn)
        else:
            self._conn.close()

    def acquire(self, run_id: str, *, wait_seconds: float = 0.0) -> None:
        """Take the store for one runtime, waiting up to ``wait_seconds`` for a holder.

        :raises StoreBusy: when another runtime still has it.
        """
        self._lock.acquire(run_id, wait_seconds=wait_seconds)
        try:
            self._verify()  # the runtime's first reads decide what it writes next
        except StoreCorrupt:
            self._lock.release()
            raise
        self._files = StoreFiles(self.path)
        # The owner keeps the log short off its commit path (see checkpoint.py).
        if self._checkpointer is None and not self.read_only:
            files = self._files
            try:
                self._checkpointer = WalCheckpointer(
                    self.path,
                    synchronous=self._synchronous,
                    idle_interval=BUSY_INTERVAL,  # (checkpoint.py: the store's cadence)
                    intact=lambda: files.check(force=True) is None,  # before every copy
                )
            except StoreError:  # its connection could not open the file: let go of it
                self._lock.release()
                raise
            self._checkpointer.start()

    def _verify(self) -> None:
        """Before this object's first write (or taking the store for a runtime):
        ``PRAGMA quick_check``, once per file per process (:func:`verify_once`). A
        damaged file is reported and never written into — a write could spread the
        damage. It reads the whole file (about a second for 150 MB); opening only probes
        the edges of each table (:func:`probe_btrees`).

        :raises StoreCorrupt: naming what is damaged, with the advice to restore it."""
        if not self._verified:
            verify_once(self._conn, self.path)
            self._verified = True

    def integrity_problems(self, limit: int = 10) -> list[str]:
        """What ``PRAGMA quick_check`` finds wrong with the file (damaged pages, broken
        indexes), at most ``limit`` lines; empty when it is sound. Reads the whole file."""
        return quick_check(self._conn, limit)

    def runtime_running(self) -> bool:
        """Whether a runtime holds this store right now."""
        return self._lock.held_by_someone()

    def listen(self) -> SocketWaker:
        return SocketWaker(self._wake)

    def wake(self) -> None:
        self._waker.send()

    # -- runs --------------------------------------------------------------------------

    def begin_run(self, run: RunRecord) -> None:
        self._tx(
            lambda c: c.execute(
                "INSERT INTO runs (id, host, pid, version, started_at, heartbeat_at, status, "
                "plugins) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*new_run_values(run), dumps(list(run.plugins))),
            )
        )

    def heartbeat(self, run_id: str, *, now: float, lease_expires: float) -> Heartbeat:
        self._guard(force=True)
        self._lock.keep_note()
        return self._tx(lambda c: turns.heartbeat(c, run_id, now=now, lease_expires=lease_expires))

    def end_run(self, run_id: str, *, now: float, status: str = "stopped") -> None:
        self._tx(
            lambda c: c.execute(
                "UPDATE runs SET status = ?, stopped_at = ?, heartbeat_at = ? WHERE id = ?",
                (status, now, now, run_id),
            )
        )

    def mark_lost_runs(self, *, now: float, stale_before: float, exclude: str) -> list[str]:
        rows = self._tx(
            lambda c: c.execute(
                "UPDATE runs SET status = 'lost', stopped_at = heartbeat_at WHERE status = "
                "'running' AND id != ? AND heartbeat_at < ? RETURNING id",
                (exclude, stale_before),
            ).fetchall()
        )
        return [r[0] for r in rows]

    def list_runs(self, limit: int = 20) -> list[RunRecord]:
        rows = self._conn.execute(
            f"SELECT {RUN_COLUMNS} FROM runs ORDER BY started_at DESC LIMIT ?", (limit,)
        ).fetchall()
        return [run_from_row(r) for r in rows]

    # -- inbox and the turn lifecycle ---------------------------------------------------

    def submit(self, request: NewTurnRequest, rules: SubmitRules, *, now: float) -> SubmitResult:
        if not plain_enqueue(rules):
            return self._tx(lambda c: turns.submit(c, request, rules, new_id(), now), wake=True)
        # A plain enqueue needs no reads: one INSERT (the triggers do the bookkeeping and
        # the refusals). A chosen id is read only when the insert fails: taken, it is
        # ``exists`` whatever else failed, as the read-first path answers.
        chosen = request.id
        turn_id = chosen or new_id()
        try:
            values = new_turn_values(request, rules, turn_id, now)
            self._insert(*turns.insert_statement(values, request.meta))
        except (sqlite3.IntegrityError, ValueError, TypeError) as exc:
            if chosen is not None and self._conn.execute(turns.EXISTS_SQL, (chosen,)).fetchone():
                return SubmitResult(chosen, "exists")
            refused = exc
        else:
            self._waker.send()
            return SubmitResult(turn_id, "queued")
        if getattr(refused, "sqlite_errorcode", None) == sqlite3.SQLITE_CONSTRAINT_TRIGGER:
            raise turns.refusal(self._conn, request, rules, str(refused)) from None
        if chosen is not None and isinstance(refused, sqlite3.IntegrityError):
            # taken when inserted, gone when read (history pruned meanwhile): read first
            return self._tx(lambda c: turns.submit(c, request, rules, turn_id, now), wake=True)
        raise refused

    def _insert(self, sql: str, params: Sequence[object]) -> None:
        """One INSERT, its own transaction, failing as a write transaction does."""
        self._may_write()
        with self._hold:
            try:
                self._conn.execute(sql, params)
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
                raise StoreError(f"{self.path}: cannot write ({exc})") from None

    def claim_turns(self, claim: ClaimRequest) -> list[TurnRequest]:
        room = admission.may_claim(self._conn, claim)
        if room is None:
            return []  # nothing queued, or no room for it: no write transaction
        return self._tx(lambda c: admission.claim(c, claim, room))

    def set_active_status(
        self, turn_id: str, *, run_id: str, attempt: int, status: TurnStatus, now: float
    ) -> bool:
        check_active_status(status)
        cursor = self._write_one(
            turns.SET_ACTIVE_SQL, (status.value, now, turn_id, run_id, attempt)
        )
        return cursor.rowcount == 1

    def resume_parked(
        self, turn_id: str, *, run_id: str, attempt: int, cap: int | None, now: float
    ) -> bool | None:
        cursor = self._write_one(turns.RESUME_PARKED_SQL, (now, turn_id, run_id, attempt, cap))
        if cursor.rowcount == 1:
            return True
        parked = self._conn.execute(turns.PARKED_SQL, (turn_id, run_id, attempt)).fetchone()
        return False if parked is not None else None

    def finish_turns(self, items: Sequence[Finish]) -> list[bool]:
        if not any(item.records for item in items):
            return self._tx(lambda c: finishing.finish_many(c, items))

        def finish(c: sqlite3.Connection) -> list[bool]:
            recorded = finishing.finish_many(c, items)
            self._put_records(c, finished_records(items, recorded))
            return recorded

        return self._tx(finish)

    def release(
        self, turn_id: str, *, run_id: str, attempt: int, now: float, max_attempts: int
    ) -> bool:
        cursor = self._write_one(turns.RELEASE_SQL, (now, max_attempts, turn_id, run_id, attempt))
        return cursor.rowcount == 1

    def recover(
        self, *, now: float, max_attempts: int, dead_runs: Collection[str] = ()
    ) -> Recovery:
        return self._tx(
            lambda c: turns.recover(c, now=now, max_attempts=max_attempts, dead_runs=dead_runs)
        )

    def cancel(self, turn_id: str, *, now: float, reason: str = "canceled") -> CancelResult:
        reason = stored_text(reason)  # (a NUL written out, as every store keeps text)
        return self._tx(lambda c: turns.cancel(c, turn_id, now, reason=reason), wake=True)

    def cancel_requests(self, run_id: str) -> frozenset[str]:
        rows = self._conn.execute(turns.CANCEL_REQUESTS_SQL, (run_id,)).fetchall()
        return frozenset(r[0] for r in rows)

    def take_steer(
        self, turn_id: str, *, run_id: str, attempt: int, now: float
    ) -> list[TurnRequest]:
        # Asked at every model call, and almost never with anything to take: a read
        # first, the write transaction only when a steered request waits.
        if self._conn.execute(turns.STEER_WAITING_SQL, (turn_id,)).fetchone() is None:
            return []
        return self._tx(
            lambda c: turns.take_steer(c, turn_id, run_id=run_id, attempt=attempt, now=now)
        )

    # -- steps (steps.py) ----------------------------------------------------------------

    def record_step(self, step: StepRecord, *, run_id: str) -> StepRecord | None:
        self._guard()
        with self._hold:
            return steps.record(self._conn, step, run_id)

    def insert_steps(self, items: Sequence[StepRecord], run_id: str) -> list[StepRecord]:
        first = items[0]
        if len(items) > 1 and all(
            s.turn_id == first.turn_id and s.attempt == first.attempt for s in items
        ):
            self._guard()
            with self._hold:
                stored = steps.insert_together(self._conn, items, run_id)
            if stored is not None:
                return stored
        return self._tx(
            lambda c: insert_each(items, lambda step: steps.insert_one(c, step, run_id))
        )

    def complete_step(self, step: StepRecord, *, run_id: str) -> StepRecord | None:
        with self._hold:
            return steps.complete(self._conn, step, run_id)

    def steps(self, turn_id: str) -> list[StepRecord]:
        return steps.of_turn(self._conn, turn_id)

    def find_step(self, idempotency_key: str) -> StepRecord | None:
        return steps.find(self._conn, idempotency_key)

    # -- queries -------------------------------------------------------------------------

    def get(self, turn_id: str) -> TurnRequest | None:
        row = self._conn.execute(
            f"SELECT {TURN_COLUMNS} FROM turn_requests WHERE id = ?", (turn_id,)
        ).fetchone()
        return None if row is None else turn_from_row(row)

    def list_turns(self, where: TurnFilter | None = None) -> list[TurnRequest]:
        condition, params = turn_filter_sql(where or TurnFilter(), "?")
        rows = self._conn.execute(
            f"SELECT {TURN_COLUMNS} FROM turn_requests{condition}", params
        ).fetchall()
        return [turn_from_row(r) for r in rows]

    def usage(self, where: UsageFilter) -> Usage:
        return usage.total(self._conn, where)

    def usage_by_owner(self, where: UsageFilter) -> dict[str, Usage]:
        return usage.by_owner(self._conn, where)

    def thread_history(self, thread_id: str, *, before_seq: int, limit: int) -> list[PastTurn]:
        rows = self._conn.execute(turns.HISTORY_SQL, (thread_id, before_seq, limit)).fetchall()
        status = _STATUS
        return [PastTurn(seq, at, status[s], text, out, why) for seq, at, s, text, out, why in rows]

    def delete_turns(self, turn_ids: Collection[str]) -> list[str]:
        return self._tx(lambda c: turns.delete_terminal(c, list(turn_ids)))

    _THREAD_COLUMNS = (
        "thread_id, thread_group, (SELECT r.id FROM turn_requests r WHERE r.thread_id = "
        f"threads.thread_id AND {active('r')}), head_id, created_at, updated_at, turns, owner"
    )

    def thread(self, thread_id: str) -> ThreadInfo | None:
        row = self._conn.execute(
            f"SELECT {self._THREAD_COLUMNS} FROM threads WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        return None if row is None else ThreadInfo(*row)

    def list_threads(self, limit: int = 50) -> list[ThreadInfo]:
        """Most recently changed first: a thread changes when its head does (a request
        queued onto an empty queue or ahead of the head, a request leaving the queue)
        and when a turn of it starts — not for a request queued behind its head."""
        rows = self._conn.execute(  # a CLI listing: a scan is fine, an index would cost every write
            f"SELECT {self._THREAD_COLUMNS} FROM threads ORDER BY updated_at DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [ThreadInfo(*r) for r in rows]

    def counts(self) -> list[GroupCount]:
        rows = self._conn.execute(
            "SELECT thread_group, status, count(*) FROM turn_requests "
            "GROUP BY thread_group, status ORDER BY thread_group, status"
        ).fetchall()
        return [GroupCount(g, TurnStatus(s), n) for g, s, n in rows]

    def group_load(self) -> dict[str, tuple[int, int]]:
        """``group -> (running, queued)``, counted in the partial indexes of the active and
        the queued requests (never in the history)."""
        running = dict(self._conn.execute(turns.RUNNING_BY_GROUP_SQL).fetchall())
        queued = dict(self._conn.execute(turns.QUEUED_BY_GROUP_SQL).fetchall())
        return {g: (running.get(g, 0), queued.get(g, 0)) for g in sorted({*running, *queued})}

    def next_wakeup(self, *, now: float) -> float | None:
        row = self._conn.execute(turns.NEXT_WAKEUP_SQL, (now,)).fetchone()
        return row[0] if row and row[0] is not None else None

    # -- plugin records --------------------------------------------------------------------

    def get_record(self, kind: str, key: str) -> Record | None:
        row = self._conn.execute(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE kind = ? AND key = ?", (kind, key)
        ).fetchone()
        return None if row is None else record_from_row(row)

    def write_record(
        self, kind: str, key: str, data: dict[str, Any], now: float, expect: int | None
    ) -> int | None:
        if expect is None:  # no revision to check: one statement, no read first
            params = (kind, key, dumps(data), now)
            self._guard()
            with self._hold:
                row = self._conn.execute(turns.PUT_RECORD_SQL, params).fetchone()
            return int(row[0])

        def write(c: sqlite3.Connection) -> int | None:
            row = c.execute(
                "SELECT revision FROM records WHERE kind = ? AND key = ?", (kind, key)
            ).fetchone()
            current = row[0] if row else 0
            if expect is not None and current != expect:
                return None
            c.execute(
                "INSERT INTO records (kind, key, revision, data, updated_at) VALUES (?,?,?,?,?) "
                "ON CONFLICT (kind, key) DO UPDATE SET revision = excluded.revision, "
                "data = excluded.data, updated_at = excluded.updated_at",
                (kind, key, current + 1, dumps(data), now),
            )
            return int(current + 1)

        return self._tx(write)

    def write_records(self, rows: Sequence[tuple[str, str, dict[str, Any], float]]) -> None:
        self._tx(lambda c: self._put_records(c, rows))

    @staticmethod
    def _put_records(
        c: sqlite3.Connection, rows: Sequence[tuple[str, str, dict[str, Any], float]]
    ) -> None:
        if rows:
            params = [(kind, key, dumps_data(data), now) for kind, key, data, now in rows]
            c.executemany(turns.PUT_RECORDS_SQL, params)

    def list_records(self, kind: str) -> list[Record]:
        rows = self._conn.execute(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE kind = ? ORDER BY key", (kind,)
        ).fetchall()
        return [record_from_row(r) for r in rows]

    def delete_record(self, kind: str, key: str) -> bool:
        return bool(
            self._tx(
                lambda c: (
                    c.execute(
                        "DELETE FROM records WHERE kind = ? AND key = ?", (kind, key)
                    ).rowcount
                )
            )
        )
