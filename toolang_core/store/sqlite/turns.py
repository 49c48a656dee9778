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
import sqlite3
from collections.abc import Collection, Mapping
from typing import Any, Final

from toolang_core.store.errors import SubmitRejected, TurnNotFound
from toolang_core.store.json_text import dumps
from toolang_core.store.lifecycle import QueuedEnd, cancel_tree, parked_crashes_free, take_steering
from toolang_core.store.owners import is_own
from toolang_core.store.rows import (
    OPTIONAL_COLUMNS,
    NewTurnValues,
    heartbeat_from_rows,
    new_turn_values,
    turn_from_row,
)
from toolang_core.store.sqlite.schema import TURN_COLUMNS, active
from toolang_core.store.submit_plan import (
    ThreadState,
    carry_out,
    make_room,
    plan_submit,
    wrong_group,
    wrong_owner,
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
)

BATCH_SQL_SIZES = 64
"""Batch statements kept per builder below, by batch size: the same string object each
time, so neither it nor its hash (the key of sqlite3's statement cache) is rebuilt."""


def dumps_meta(meta: Mapping[str, Any]) -> str:
    return dumps(dict(meta)) if meta else "{}"  # most requests carry none


# Queued requests of one thread are few; a thread's history may be long: use the
# queued-only index (the planner cannot know which is smaller).
COALESCE_SQL = (
    "SELECT id FROM turn_requests INDEXED BY turn_queued_in_thread "
    "WHERE thread_id = ? AND status = 'queued' AND dedupe_key = ? ORDER BY seq LIMIT 1"
)
# The steered requests of a thread: a partial index of their own, usually empty.
STEER_SQL = (
    f"SELECT {TURN_COLUMNS} FROM turn_requests INDEXED BY turn_steer_waiting "
    "WHERE thread_id = ? AND status = 'queued' AND steer = 1 ORDER BY seq"
)
PUT_RECORD_SQL = (
    "INSERT INTO records (kind, key, revision, data, updated_at) VALUES (?, ?, 1, ?, ?) "
    "ON CONFLICT (kind, key) DO UPDATE SET revision = records.revision + 1, "
    "data = excluded.data, updated_at = excluded.updated_at RETURNING revision"
)
"""A record written whatever its revision: one statement, its own transaction."""
PUT_RECORDS_SQL = PUT_RECORD_SQL.removesuffix(" RETURNING revision")
"""``PUT_RECORD_SQL`` for several records in a transaction (``executemany``)."""
STEER_WAITING_SQL = (
    "SELECT 1 FROM turn_requests INDEXED BY turn_steer_waiting "
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
STATUS_SQL = "SELECT status FROM turn_requests WHERE id = ?"
HISTORY_SQL = (
    "SELECT seq, created_at, status, input, output, outcome FROM turn_requests "
    "WHERE thread_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?"
)
"""A thread's earlier turns, newest first: only what a prompt's history reads of them."""
ACTIVE_IN_THREAD_SQL = f"SELECT id FROM turn_requests WHERE thread_id = ? AND {active()}"
HOLDS_A_SLOT = "status <> 'awaiting_approval'"
"""Of the active turns, those holding a slot of their group: a turn parked on a person's
decision gives its slot back (its thread stays busy)."""
RUNNING_BY_GROUP_SQL = (
    f"SELECT thread_group, count(*) FROM turn_requests WHERE {active()} AND {HOLDS_A_SLOT} "
    "GROUP BY thread_group"
)
RESUME_PARKED_SQL = (
    "UPDATE turn_requests SET status = 'running', updated_at = ?1 "
    "WHERE id = ?2 AND lease_owner = ?3 AND attempt = ?4 AND status = 'awaiting_approval' "
    "AND (?5 IS NULL OR (SELECT count(*) FROM turn_requests h "
    f"WHERE h.thread_group = turn_requests.thread_group AND {active('h')} "
    "AND h.status <> 'awaiting_approval') < ?5)"
)
"""A parked turn takes a slot of its group again, if the group has one free (one
statement: the count and the change are one write)."""
PARKED_SQL = (
    "SELECT 1 FROM turn_requests WHERE id = ? AND lease_owner = ? AND attempt = ? "
    "AND status = 'awaiting_approval'"
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
# Columns a request often leaves empty: an INSERT names only those it sets (binding a
# ``None`` costs the sqlite3 module an adapter lookup, about 0.4 us a parameter).
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


def insert_statement(
    new: NewTurnValues, meta: Mapping[str, Any], steer: bool = False
) -> tuple[str, tuple[object, ...]]:
    """The INSERT of a new queued row (``new_turn_values``), and its parameters."""
    fixed, optional = new
    params = (*fixed, dumps_meta(meta), int(steer))
    if optional == _NO_OPTIONAL:
        return insert_sql(_NONE_PRESENT), params
    present = tuple([value is not None for value in optional])
    return insert_sql(present), (*params, *[value for value in optional if value is not None])


def end_queued(c: sqlite3.Connection, turn_id: str, end: QueuedEnd, now: float) -> bool:
    """Give a queued request a terminal status without it ever running."""
    cursor = c.execute(
        "UPDATE turn_requests SET status = ?, outcome = ?, error = ?, output = ?, "
        "finished_at = ?, updated_at = ? WHERE id = ? AND status = 'queued'",
        (end.status.value, end.outcome, end.error, end.output, now, now, turn_id),
    )
    return cursor.rowcount == 1


# -- ingress ---------------------------------------------------------------------------


EXISTS_SQL: Final = "SELECT 1 FROM turn_requests WHERE id = ?"
"""Whether a request with this id was submitted already."""


def submit(
    c: sqlite3.Connection, request: NewTurnRequest, rules: SubmitRules, new_id: str, now: float
) -> SubmitResult:
    if request.id is not None and c.execute(EXISTS_SQL, (request.id,)).fetchone():
        return SubmitResult(request.id, "exists")
    thread = c.execute(
        f"SELECT thread_group, ({ACTIVE_IN_THREAD_SQL}), head_id, owner FROM threads "
        "WHERE thread_id = ?",
        (request.thread_id, request.thread_id),
    ).fetchone()
    state = None if thread is None else ThreadState(thread[0], thread[3], thread[1], thread[2])
    plan = plan_submit(request, rules, state)
    turn_id = request.id or new_id
    return carry_out(
        plan,
        turn_id,
        coalesce=lambda key: _coalesce(c, request, key, now),
        interrupt=lambda running, reason: cancel(c, running, now, reason=reason),
        make_room=lambda: _make_room(c, rules, now),
        insert=lambda: c.execute(
            *insert_statement(
                new_turn_values(request, rules, turn_id, now, plan), request.meta, plan.steer
            )
        ),
    )


def refusal(
    c: sqlite3.Connection, request: NewTurnRequest, rules: SubmitRules, message: str
) -> SubmitRejected:
    """What an insert the store's triggers refused (``message``) is refused as: another
    owner's thread first, whatever else the thread is (as :func:`plan_submit` decides)."""
    row = c.execute(
        "SELECT thread_group, owner FROM threads WHERE thread_id = ?", (request.thread_id,)
    ).fetchone()
    if "another owner" in message or (row is not None and not is_own(row[1], request.owner)):
        return wrong_owner(request)
    return wrong_group(request, rules, row[0] if row else None)


def _coalesce(
    c: sqlite3.Connection, request: NewTurnRequest, key: str | None, now: float
) -> str | None:
    """Update the thread's queued request with ``key`` to ``request``; its id, if any."""
    existing = c.execute(COALESCE_SQL, (request.thread_id, key)).fetchone()
    if existing is None:
        return None
    c.execute(
        "UPDATE turn_requests SET input = ?, meta = ?, updated_at = ? WHERE id = ?",
        (request.input, dumps(dict(request.meta)), now, existing[0]),
    )
    return str(existing[0])


def _make_room(c: sqlite3.Connection, rules: SubmitRules, now: float) -> tuple[str, ...]:
    """Apply the group's ``max_queued`` (SQLite's single writer: no lock needed)."""
    return make_room(
        rules,
        queued=lambda: int(c.execute(QUEUED_IN_GROUP_SQL, (rules.thread_group,)).fetchone()[0]),
        victim=lambda newest: _victim(c, rules.thread_group, newest=newest),
        drop=lambda victim, end: end_queued(c, victim, end, now),
    )


def _victim(c: sqlite3.Connection, group: str, *, newest: bool) -> str | None:
    sql = NEWEST_QUEUED_IN_GROUP_SQL if newest else OLDEST_QUEUED_IN_GROUP_SQL
    row = c.execute(sql, (group,)).fetchone()
    return None if row is None else str(row[0])


SPENT: Final = "status <> 'awaiting_approval' AND attempt - parked_handbacks >= ?2"
"""A turn handed back has spent its attempts: it ran (was not waiting for a person)
and its attempts that ran reach ``max_attempts`` (?2)."""

RELEASE_SQL = (
    "UPDATE turn_requests SET "
    "status = CASE WHEN status = 'canceling' THEN 'canceled' "
    f"WHEN {SPENT} THEN 'failed' ELSE 'queued' END, "
    "outcome = CASE WHEN status = 'canceling' THEN 'canceled' "
    f"WHEN {SPENT} THEN 'abandoned' ELSE NULL END, "
    f"error = CASE WHEN status <> 'canceling' AND {SPENT} THEN 'abandoned after ' "
    "|| (attempt - parked_handbacks) || ' attempt(s): the runtime running it shut down "
    "before it finished (limit ' || ?2 || ')' ELSE error END, "
    f"finished_at = CASE WHEN status = 'canceling' OR {SPENT} THEN ?1 END, "
    "parked_handbacks = parked_handbacks + (status = 'awaiting_approval'), "
    "lease_owner = NULL, lease_expires = NULL, cancel_requested = 0, updated_at = ?1 "
    f"WHERE id = ?3 AND lease_owner = ?4 AND attempt = ?5 AND {active()}"
)
"""Shutdown hands a turn back with its attempt counted, as a crash would: a turn
requeued at every stop must still reach ``max_attempts`` (?2) — unless it was waiting
for a person (``parked_handbacks``, :func:`.schema.m009_parked_hand_backs`)."""

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


@functools.lru_cache(maxsize=BATCH_SQL_SIZES)
def record_steps_sql(count: int) -> str:
    """``RECORD_STEP_SQL`` for ``count`` steps of one turn and attempt in one statement:
    ``?1`` the turn, ``?2`` the attempt, ``?3`` the run; then per step its kind, status,
    times, data, error and key. They take the next ``count`` sequence numbers in order
    (the new rows are read after the maximum is: SQLite runs the ``SELECT`` of an
    ``INSERT`` into the table it reads to its end first)."""
    rows = ",".join(
        f"({n}, " + ", ".join(f"?{3 + 7 * (n - 1) + k}" for k in range(1, 8)) + ")"
        for n in range(1, count + 1)
    )
    return (
        "WITH v(n, kind, status, started_at, finished_at, data, error, idempotency_key) "
        f"AS (VALUES {rows}) "
        "INSERT INTO turn_steps (turn_id, seq, attempt, kind, status, started_at, finished_at, "
        "data, error, idempotency_key) "
        "SELECT ?1, (SELECT COALESCE(MAX(seq), 0) FROM turn_steps WHERE turn_id = ?1) + v.n, "
        "?2, v.kind, v.status, v.started_at, v.finished_at, v.data, v.error, v.idempotency_key "
        "FROM v WHERE EXISTS (SELECT 1 FROM turn_requests WHERE id = ?1 "
        f"AND lease_owner = ?3 AND attempt = ?2 AND {active()}) ORDER BY v.n RETURNING seq"
    )


COMPLETE_STEP_SQL = (
    "UPDATE turn_steps SET attempt = ?2, status = ?3, finished_at = ?4, data = ?5, "
    "error = ?6 WHERE idempotency_key = ?7 AND turn_id = ?1 AND status = 'intent' "
    "AND EXISTS (SELECT 1 FROM turn_requests WHERE id = ?1 AND lease_owner = ?8 "
    f"AND attempt = ?2 AND {active()}) RETURNING seq"
)
"""A tool call's result over its intent, fenced like ``RECORD_STEP_SQL``."""


def recover(
    c: sqlite3.Connection, *, now: float, max_attempts: int, dead_runs: Collection[str]
) -> Recovery:
    dead = list(dead_runs)
    marks = ",".join("?" * len(dead))
    dead_clause = f" OR lease_owner IN ({marks})" if dead else ""
    rows = c.execute(
        f"SELECT id, status, attempt - parked_handbacks, parked_handbacks FROM turn_requests "
        f"WHERE {active()} AND (lease_expires < ?{dead_clause})",
        (now, *dead),
    ).fetchall()
    requeued, failed, canceled = [], [], []
    for turn_id, status, ran, handbacks in rows:
        # not counted while it waited, up to a bound (a crash loop while parked ends)
        parked = status == TurnStatus.AWAITING_APPROVAL and handbacks < parked_crashes_free(
            max_attempts
        )
        if status == TurnStatus.CANCELING:
            new, outcome, error = TurnStatus.CANCELED, "canceled", None
            canceled.append(turn_id)
        elif not parked and ran >= max_attempts:
            new, outcome = TurnStatus.FAILED, "abandoned"
            error = (
                f"abandoned after {ran} attempt(s): the runtime running it stopped "
                f"without finishing (limit {max_attempts})"
            )
            failed.append(turn_id)
        else:
            new, outcome, error = TurnStatus.QUEUED, None, None
            requeued.append(turn_id)
        c.execute(
            "UPDATE turn_requests SET status = ?, outcome = ?, error = COALESCE(?, error), "
            "lease_owner = NULL, lease_expires = NULL, updated_at = ?, "
            "parked_handbacks = parked_handbacks + ?, "
            "finished_at = CASE WHEN ? = 'queued' THEN NULL ELSE ? END WHERE id = ?",
            (new.value, outcome, error, now, int(parked), new.value, now, turn_id),
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
    if c.execute(STATUS_SQL, (turn_id,)).fetchone() is None:
        raise TurnNotFound(f"no turn request with id {turn_id!r}")
    changed = cancel_tree(
        turn_id,
        reason,
        status_of=lambda current: TurnStatus(c.execute(STATUS_SQL, (current,)).fetchone()[0]),
        end_queued=lambda current, end: end_queued(c, current, end, now),
        request_cancel=lambda current: c.execute(
            "UPDATE turn_requests SET status = 'canceling', cancel_requested = 1, error = ?, "
            "updated_at = ? WHERE id = ?",
            (reason, now, current),
        ),
        children=lambda current: [
            r[0] for r in c.execute("SELECT id FROM turn_requests WHERE parent = ?", (current,))
        ],
    )
    final = c.execute(STATUS_SQL, (turn_id,)).fetchone()[0]
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
    steering = [turn_from_row(row) for row in c.execute(STEER_SQL, (owner[0],)).fetchall()]
    return take_steering(turn_id, steering, lambda queued, end: end_queued(c, queued, end, now))


def heartbeat(c: sqlite3.Connection, run_id: str, *, now: float, lease_expires: float) -> Heartbeat:
    c.execute("UPDATE runs SET heartbeat_at = ? WHERE id = ?", (now, run_id))
    rows = c.execute(
        "UPDATE turn_requests SET lease_expires = ? WHERE lease_owner = ? "
        f"AND {active()} RETURNING id, cancel_requested",
        (lease_expires, run_id),
    ).fetchall()
    return heartbeat_from_rows(rows)
