"""Turn-request state changes in the SQLite store, one function per operation.

Functions taking a connection run inside the caller's ``BEGIN IMMEDIATE`` transaction;
SQLite's single writer serialises them, so the checks and the changes they guard are
atomic. The ``threads`` row of each thread (its head: the best queued request by
``(rank, seq)``) is maintained by triggers when a request enters or leaves the queue,
and by the claim for the threads it starts (``admission.py``). A thread's active turn
and a group's running count are read from the active set (``turn_one_active_per_thread``,
as small as the number of running turns) instead of being written on every start and
finish.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

import attrs

from toolang_core.store.errors import SubmitRejected, TurnNotFound
from toolang_core.store.sqlite.schema import TURN_COLUMNS, active
from toolang_core.store.submit_plan import (  # re-exported: older import path
    ThreadState,
    plan_submit,
)
from toolang_core.store.types import (
    CancelResult,
    Heartbeat,
    NewTurnRequest,
    Recovery,
    SubmitResult,
    SubmitRules,
    TurnRequest,
    TurnStatus,
    rank_for,
)

BATCH_SQL_SIZES = 64
"""Batch statements kept per builder below, by batch size: the same string object each
time, so neither it nor its hash (the key of sqlite3's statement cache) is rebuilt."""


def _not_serializable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_MAKE_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)  # absent on some Pythons
_C_ENCODE = (
    None
    if _MAKE_C_ENCODER is None
    else _MAKE_C_ENCODER(
        None, _not_serializable, json.encoder.encode_basestring, None, ":", ",", False, False, True
    )
)
"""The C encoder ``JSONEncoder.encode`` builds anew on every call, built once (half the
cost of encoding a step's data). Without circular-reference markers: a cycle ends in
``RecursionError``, reported as ``ValueError`` below."""


def dumps(value: object) -> str:
    """Compact JSON (non-ASCII kept as is) of a value to store."""
    if _C_ENCODE is None:
        return _ENCODER.encode(value)
    try:
        return "".join(_C_ENCODE(value, 0))
    except RecursionError:
        raise ValueError("cannot store as JSON: a circular or too deeply nested value") from None


def dumps_meta(meta: Mapping[str, Any]) -> str:
    return dumps(dict(meta)) if meta else "{}"  # most requests carry none


def loads_meta(text: str) -> dict[str, Any]:
    return json.loads(text) if text != "{}" else {}


_STATUS = {s.value: s for s in TurnStatus}


def turn_from_row(row: Sequence[Any]) -> TurnRequest:
    """Build a :class:`TurnRequest` from a row selected with ``TURN_COLUMNS``.

    The columns are the class's fields in order (checked below), so the row is passed
    positionally after converting six of them: 30 keyword arguments cost a third more.
    """
    values = list(row)
    values[8] = _STATUS[values[8]]  # status
    values[16] = values[16] or None  # not_before: 0 in the row means none
    values[20] = loads_meta(values[20])  # meta
    values[21] = bool(values[21])  # steer
    values[26] = bool(values[26])  # cancel_requested
    return TurnRequest(*values)


_FIELDS = [field.name for field in attrs.fields(TurnRequest)]
if TURN_COLUMNS.split(", ") != _FIELDS:  # pragma: no cover - a change to either one
    raise ImportError(f"TURN_COLUMNS must list TurnRequest's fields in order: {_FIELDS}")


# Queued requests of one thread are few; a thread's history may be long: use the
# queued-only index (the planner cannot know which is smaller).
COALESCE_SQL = (
    "SELECT id FROM turn_requests INDEXED BY turn_queued_in_thread "
    "WHERE thread_id = ? AND status = 'queued' AND dedupe_key = ? ORDER BY seq LIMIT 1"
)
STEER_SQL = (
    f"SELECT {TURN_COLUMNS} FROM turn_requests INDEXED BY turn_queued_in_thread "
    "WHERE thread_id = ? AND status = 'queued' AND steer = 1 ORDER BY seq"
)
PUT_RECORD_SQL = (
    "INSERT INTO records (kind, key, revision, data, updated_at) VALUES (?, ?, 1, ?, ?) "
    "ON CONFLICT (kind, key) DO UPDATE SET revision = records.revision + 1, "
    "data = excluded.data, updated_at = excluded.updated_at RETURNING revision"
)
"""A record written whatever its revision: one statement, its own transaction."""
STEER_WAITING_SQL = (
    "SELECT 1 FROM turn_requests INDEXED BY turn_queued_in_thread "
    "WHERE thread_id = (SELECT thread_id FROM turn_requests WHERE id = ?) "
    "AND status = 'queued' AND steer = 1 LIMIT 1"
)
"""Whether a steered request waits in the thread of a turn (a read, no transaction)."""
# A partial index is used only when the query repeats its condition word for word.
CANCEL_REQUESTS_SQL = (
    f"SELECT id FROM turn_requests WHERE lease_owner = ? AND {active()} "
    "AND status = 'canceling' AND cancel_requested = 1"
)
NEXT_WAKEUP_SQL = (
    "SELECT MIN(head_not_before) FROM threads "
    "WHERE head_id IS NOT NULL AND head_not_before > 0 AND head_not_before > ?"
)
ACTIVE_IN_THREAD_SQL = f"SELECT id FROM turn_requests WHERE thread_id = ? AND {active()}"
RUNNING_BY_GROUP_SQL = (
    f"SELECT thread_group, count(*) FROM turn_requests WHERE {active()} GROUP BY thread_group"
)
# A group's queued requests: its threads that have a head, then each one's queue (no
# index by group is kept for this: it would cost every submit and claim, and only an
# overflow rule or a status line asks).
_QUEUED_OF_GROUPS = (
    "FROM threads t JOIN turn_requests r INDEXED BY turn_queued_in_thread "
    "ON r.thread_id = t.thread_id "
    "WHERE t.head_id IS NOT NULL AND r.status = 'queued'"
)
QUEUED_IN_GROUP_SQL = f"SELECT count(*) {_QUEUED_OF_GROUPS} AND t.thread_group = ?"
QUEUED_BY_GROUP_SQL = f"SELECT t.thread_group, count(*) {_QUEUED_OF_GROUPS} GROUP BY t.thread_group"
OLDEST_QUEUED_IN_GROUP_SQL = (
    f"SELECT r.id {_QUEUED_OF_GROUPS} AND t.thread_group = ? ORDER BY r.seq LIMIT 1"
)
NEWEST_QUEUED_IN_GROUP_SQL = (
    f"SELECT r.id {_QUEUED_OF_GROUPS} AND t.thread_group = ? ORDER BY r.seq DESC LIMIT 1"
)
OPTIONAL_COLUMNS: Final = (
    "channel",
    "agent",
    "dedupe_key",
    "not_before",
    "parent",
    "owner",
    "timeout_seconds",
)
"""Columns a request often leaves empty: an INSERT names only those it sets (binding a
``None`` costs the sqlite3 module an adapter lookup, about 0.4 us a parameter)."""
_NO_OPTIONAL: Final = (None,) * len(OPTIONAL_COLUMNS)
_NONE_PRESENT: Final = (False,) * len(OPTIONAL_COLUMNS)


@functools.lru_cache(maxsize=128)  # one per combination of OPTIONAL_COLUMNS
def insert_sql(present: tuple[bool, ...]) -> str:
    """The INSERT of a new queued request that sets the optional columns in ``present``."""
    names = [name for name, there in zip(OPTIONAL_COLUMNS, present, strict=True) if there]
    optional = "".join(f", {name}" for name in names)
    return (
        "INSERT INTO turn_requests (id, source, thread_id, thread_group, priority, rank, input, "
        f"status, attempt, created_at, updated_at, sender, meta, steer{optional}) "
        f"VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?, ?, ?{', ?' * len(names)})"
    )


def is_simple(request: NewTurnRequest, rules: SubmitRules) -> bool:
    """Whether submitting needs no reads first: one INSERT, atomic on its own."""
    return rules.strategy == "enqueue" and rules.max_queued is None and request.id is None


def insert_statement(
    request: NewTurnRequest,
    rules: SubmitRules,
    turn_id: str,
    now: float,
    *,
    dedupe_key: str | None = None,
    steer: bool = False,
) -> tuple[str, tuple[object, ...]]:
    """The INSERT of ``request`` as a new queued row, and its parameters."""
    eligible = max(now, request.not_before or 0.0)
    params = (
        turn_id,
        request.source,
        request.thread_id,
        rules.thread_group,
        rules.priority,
        rank_for(eligible, rules.priority, rules.aging_seconds),
        request.input,
        now,
        now,
        request.sender,
        dumps_meta(request.meta),
        int(steer),
    )
    optional = (
        request.channel,
        request.agent,
        dedupe_key or request.dedupe_key,
        request.not_before,
        request.parent,
        request.owner,
        request.timeout_seconds,
    )
    if optional == _NO_OPTIONAL:
        return insert_sql(_NONE_PRESENT), params
    present = tuple([value is not None for value in optional])
    return insert_sql(present), (*params, *[value for value in optional if value is not None])


def _end_queued(
    c: sqlite3.Connection,
    turn_id: str,
    *,
    status: TurnStatus,
    outcome: str,
    error: str | None,
    now: float,
    output: str | None = None,
) -> None:
    """Give a queued request a terminal status without it ever running."""
    c.execute(
        "UPDATE turn_requests SET status = ?, outcome = ?, error = ?, output = ?, "
        "finished_at = ?, updated_at = ? WHERE id = ? AND status = 'queued'",
        (status.value, outcome, error, output, now, now, turn_id),
    )


# -- ingress ---------------------------------------------------------------------------


def submit(
    c: sqlite3.Connection, request: NewTurnRequest, rules: SubmitRules, new_id: str, now: float
) -> SubmitResult:
    if (
        request.id is not None
        and c.execute("SELECT 1 FROM turn_requests WHERE id = ?", (request.id,)).fetchone()
    ):
        return SubmitResult(request.id, "exists")
    thread = c.execute(
        f"SELECT thread_group, ({ACTIVE_IN_THREAD_SQL}), head_id, owner FROM threads "
        "WHERE thread_id = ?",
        (request.thread_id, request.thread_id),
    ).fetchone()
    state = None if thread is None else ThreadState(thread[0], thread[3], thread[1], thread[2])
    plan = plan_submit(request, rules, state)
    if plan.coalesce:
        existing = c.execute(COALESCE_SQL, (request.thread_id, plan.dedupe_key)).fetchone()
        if existing is not None:
            c.execute(
                "UPDATE turn_requests SET input = ?, meta = ?, updated_at = ? WHERE id = ?",
                (request.input, dumps(dict(request.meta)), now, existing[0]),
            )
            return SubmitResult(existing[0], "coalesced")
    interrupted: tuple[str, ...] = ()
    if plan.interrupt is not None:
        cancel(c, plan.interrupt, now, reason="interrupted by a newer request on its thread")
        interrupted = (plan.interrupt,)
    dropped = _make_room(c, rules, now)
    turn_id = request.id or new_id
    c.execute(
        *insert_statement(
            request, rules, turn_id, now, dedupe_key=plan.dedupe_key, steer=plan.steer
        )
    )
    return SubmitResult(
        turn_id, "queued", dropped=dropped, interrupted=interrupted, steer=plan.steer
    )


def _make_room(c: sqlite3.Connection, rules: SubmitRules, now: float) -> tuple[str, ...]:
    if rules.max_queued is None:
        return ()
    dropped: list[str] = []
    while True:
        queued = c.execute(QUEUED_IN_GROUP_SQL, (rules.thread_group,)).fetchone()[0]
        if queued < rules.max_queued:
            return tuple(dropped)
        victim_sql = {
            "drop_oldest": OLDEST_QUEUED_IN_GROUP_SQL,
            "replace_pending": NEWEST_QUEUED_IN_GROUP_SQL,
        }.get(rules.overflow)
        victim = None
        if victim_sql is not None:
            victim = c.execute(victim_sql, (rules.thread_group,)).fetchone()
        if victim is None:
            raise SubmitRejected(
                f"group {rules.thread_group!r} already has {queued} queued request(s) "
                f"(max_queued = {rules.max_queued}, overflow = {rules.overflow!r})",
                reason="queue_full",
            )
        outcome = "overflow_dropped" if rules.overflow == "drop_oldest" else "overflow_replaced"
        _end_queued(
            c,
            victim[0],
            status=TurnStatus.DROPPED,
            outcome=outcome,
            error=f"dropped by group {rules.thread_group!r}'s overflow rule ({rules.overflow})",
            now=now,
        )
        dropped.append(victim[0])


RELEASE_SQL = (
    "UPDATE turn_requests SET "
    "status = CASE WHEN status = 'canceling' THEN 'canceled' "
    "WHEN attempt >= ?2 THEN 'failed' ELSE 'queued' END, "
    "outcome = CASE WHEN status = 'canceling' THEN 'canceled' "
    "WHEN attempt >= ?2 THEN 'abandoned' ELSE NULL END, "
    "error = CASE WHEN status <> 'canceling' AND attempt >= ?2 THEN 'abandoned after ' "
    "|| attempt || ' attempt(s): the runtime running it shut down before it finished "
    "(limit ' || ?2 || ')' ELSE error END, "
    "finished_at = CASE WHEN status = 'canceling' OR attempt >= ?2 THEN ?1 END, "
    "lease_owner = NULL, lease_expires = NULL, cancel_requested = 0, updated_at = ?1 "
    f"WHERE id = ?3 AND lease_owner = ?4 AND attempt = ?5 AND {active()}"
)
"""Shutdown hands a turn back with its attempt counted, as a crash would: a turn
requeued at every stop must still reach ``max_attempts`` (?2)."""

SET_ACTIVE_SQL = (
    "UPDATE turn_requests SET status = ?, updated_at = ? WHERE id = ? AND lease_owner = ? "
    "AND attempt = ? AND status IN ('running', 'awaiting_approval')"
)

RECORD_STEP_SQL = (
    "INSERT INTO turn_steps (turn_id, seq, attempt, kind, status, started_at, finished_at, "
    "data, error, idempotency_key) "
    "SELECT ?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM turn_steps WHERE turn_id = ?1), "
    "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 WHERE EXISTS (SELECT 1 FROM turn_requests WHERE id = ?1 "
    f"AND lease_owner = ?10 AND attempt = ?2 AND {active()}) RETURNING seq"
)
"""One statement: the fence check, the next sequence number and the insert together."""

COMPLETE_STEP_SQL = (
    "UPDATE turn_steps SET attempt = ?2, status = ?3, finished_at = ?4, data = ?5, "
    "error = ?6 WHERE idempotency_key = ?7 AND turn_id = ?1 AND status = 'intent' "
    "AND EXISTS (SELECT 1 FROM turn_requests WHERE id = ?1 AND lease_owner = ?8 "
    f"AND attempt = ?2 AND {active()}) RETURNING seq"
)
"""A tool call's result over its intent, fenced like ``RECORD_STEP_SQL``."""


def check_active_status(status: TurnStatus) -> None:
    if status not in (TurnStatus.RUNNING, TurnStatus.AWAITING_APPROVAL):
        raise ValueError(f"an active turn can move to running or awaiting_approval, not {status}")


def recover(
    c: sqlite3.Connection, *, now: float, max_attempts: int, dead_runs: Collection[str]
) -> Recovery:
    dead = list(dead_runs)
    marks = ",".join("?" * len(dead))
    dead_clause = f" OR lease_owner IN ({marks})" if dead else ""
    rows = c.execute(
        f"SELECT id, status, attempt FROM turn_requests WHERE {active()} "
        f"AND (lease_expires < ?{dead_clause})",
        (now, *dead),
    ).fetchall()
    requeued, failed, canceled = [], [], []
    for turn_id, status, attempt in rows:
        if status == TurnStatus.CANCELING:
            new, outcome, error = TurnStatus.CANCELED, "canceled", None
            canceled.append(turn_id)
        elif attempt >= max_attempts:
            new, outcome = TurnStatus.FAILED, "abandoned"
            error = (
                f"abandoned after {attempt} attempt(s): the runtime running it stopped "
                f"without finishing (limit {max_attempts})"
            )
            failed.append(turn_id)
        else:
            new, outcome, error = TurnStatus.QUEUED, None, None
            requeued.append(turn_id)
        c.execute(
            "UPDATE turn_requests SET status = ?, outcome = ?, error = COALESCE(?, error), "
            "lease_owner = NULL, lease_expires = NULL, updated_at = ?, "
            "finished_at = CASE WHEN ? = 'queued' THEN NULL ELSE ? END WHERE id = ?",
            (new.value, outcome, error, now, new.value, now, turn_id),
        )
    return Recovery(tuple(requeued), tuple(failed), tuple(canceled))


def delete_terminal(c: sqlite3.Connection, turn_ids: list[str]) -> list[str]:
    """Delete the terminal requests among ``turn_ids``, their steps, and the threads
    they leave empty (no trigger fires: a terminal request is no thread's head)."""
    deleted: list[str] = []
    threads: set[str] = set()
    terminal = tuple(s.value for s in TurnStatus if s.is_terminal)
    marks = ",".join("?" * len(terminal))
    for turn_id in turn_ids:
        row = c.execute(
            f"DELETE FROM turn_requests WHERE id = ? AND status IN ({marks}) RETURNING thread_id",
            (turn_id, *terminal),
        ).fetchone()
        if row is None:
            continue
        c.execute("DELETE FROM turn_steps WHERE turn_id = ?", (turn_id,))
        deleted.append(turn_id)
        threads.add(row[0])
    for thread_id in threads:
        c.execute(
            "DELETE FROM threads WHERE thread_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM turn_requests WHERE thread_id = ?)",
            (thread_id, thread_id),
        )
    return deleted


# -- cancellation, steering, heartbeats ------------------------------------------------------


def cancel(c: sqlite3.Connection, turn_id: str, now: float, *, reason: str) -> CancelResult:
    row = c.execute("SELECT status FROM turn_requests WHERE id = ?", (turn_id,)).fetchone()
    if row is None:
        raise TurnNotFound(f"no turn request with id {turn_id!r}")
    changed: dict[str, TurnStatus] = {}
    pending = [turn_id]
    seen: set[str] = set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        status = TurnStatus(
            c.execute("SELECT status FROM turn_requests WHERE id = ?", (current,)).fetchone()[0]
        )
        if status is TurnStatus.QUEUED:
            _end_queued(
                c, current, status=TurnStatus.CANCELED, outcome="canceled", error=reason, now=now
            )
            changed[current] = TurnStatus.CANCELED
        elif status in (TurnStatus.RUNNING, TurnStatus.AWAITING_APPROVAL):
            c.execute(
                "UPDATE turn_requests SET status = 'canceling', cancel_requested = 1, error = ?, "
                "updated_at = ? WHERE id = ?",
                (reason, now, current),
            )
            changed[current] = TurnStatus.CANCELING
        pending.extend(
            r[0] for r in c.execute("SELECT id FROM turn_requests WHERE parent = ?", (current,))
        )
    final = c.execute("SELECT status FROM turn_requests WHERE id = ?", (turn_id,)).fetchone()[0]
    return CancelResult(turn_id, TurnStatus(final), changed)


def take_steer(
    c: sqlite3.Connection, turn_id: str, *, run_id: str, attempt: int, now: float
) -> list[TurnRequest]:
    owner = c.execute(
        f"SELECT thread_id FROM turn_requests WHERE id = ? AND lease_owner = ? AND attempt = ? "
        f"AND {active()}",
        (turn_id, run_id, attempt),
    ).fetchone()
    if owner is None:
        return []
    rows = c.execute(STEER_SQL, (owner[0],)).fetchall()
    taken = []
    for row in rows:
        turn = turn_from_row(row)
        _end_queued(
            c,
            turn.id,
            status=TurnStatus.STEERED,
            outcome="steered",
            error=None,
            now=now,
            output=f"delivered into running turn {turn_id}",
        )
        taken.append(turn)
    return taken


def heartbeat(c: sqlite3.Connection, run_id: str, *, now: float, lease_expires: float) -> Heartbeat:
    c.execute("UPDATE runs SET heartbeat_at = ? WHERE id = ?", (now, run_id))
    rows = c.execute(
        "UPDATE turn_requests SET lease_expires = ? WHERE lease_owner = ? "
        f"AND {active()} RETURNING id, cancel_requested",
        (lease_expires, run_id),
    ).fetchall()
    return Heartbeat(
        owned=frozenset(r[0] for r in rows),
        cancel_requested=frozenset(r[0] for r in rows if r[1]),
    )
