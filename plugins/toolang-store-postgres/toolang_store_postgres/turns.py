"""Turn-request state changes on PostgreSQL, one function per operation.

Functions taking a connection run inside the caller's transaction (READ COMMITTED).
Several nodes run them at once, so each one keeps two rules:

* **Lock the thread row before changing a request of that thread.** Claims lock
  thread rows with ``SKIP LOCKED`` and then update the head request, so anything else
  that updates a request must hold its thread's row first — the other order deadlocks
  against a claim. The triggers (see ``schema.py``) then keep the row consistent.
* **Re-read after locking.** A statement that started before the lock was granted
  reads an old snapshot; the checks that guard a change are made by statements run
  after it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Final

import psycopg

from toolang_core.store import (
    CancelResult,
    Finish,
    Heartbeat,
    Recovery,
    TurnNotFound,
    TurnRequest,
    TurnStatus,
)
from toolang_core.store.backend import (
    PARKED_CRASHES_FREE_PER_ATTEMPT,
    QueuedEnd,
    cancel_tree,
    heartbeat_from_rows,
    take_steering,
    turn_from_row,
)
from toolang_store_postgres.connection import json_text
from toolang_store_postgres.schema import Names

Conn = psycopg.Connection[Any]


LOCK_THREAD_OF_SQL = (
    "SELECT 1 FROM {s}.threads WHERE thread_id = "
    "(SELECT thread_id FROM {s}.turn_requests WHERE id = %s) FOR UPDATE"
)
LOCK_THREADS_SQL = (
    "SELECT thread_id FROM {s}.threads WHERE thread_id = ANY(%s) ORDER BY thread_id FOR UPDATE"
)
"""Several threads at once, in one order, so two such writers never deadlock."""


def end_queued(c: Conn, q: Names, turn_id: str, end: QueuedEnd, now: float) -> bool:
    """Give a queued request a terminal status without it ever running (its thread's
    row must be locked)."""
    cursor = c.execute(
        q(
            "UPDATE {s}.turn_requests SET status = %s, outcome = %s, error = %s, output = %s, "
            "finished_at = %s, updated_at = %s WHERE id = %s AND status = 'queued'"
        ),
        (end.status.value, end.outcome, end.error, end.output, now, now, turn_id),
    )
    return cursor.rowcount == 1


# -- the turn lifecycle -----------------------------------------------------------------

CLAIM_SQL = "SELECT {columns} FROM {s}.claim(%s, %s, %s, %s, %s, %s, %s)"

FINISH_MANY_SQL = """
WITH done AS (
    UPDATE {s}.turn_requests t SET status = i.status, output = i.output, outcome = i.outcome,
        error = i.error, finished_at = i.now, updated_at = i.now,
        lease_owner = NULL, lease_expires = NULL
    FROM unnest(%(ids)s::text[], %(runs)s::text[], %(attempts)s::int[], %(statuses)s::text[],
                %(outputs)s::text[], %(outcomes)s::text[], %(errors)s::text[],
                %(nows)s::float8[])
         AS i(id, run, attempt, status, output, outcome, error, now)
    WHERE t.id = i.id AND t.lease_owner = i.run AND t.attempt = i.attempt
      AND t.status IN {active}
    RETURNING t.id
), steps AS (
    INSERT INTO {s}.turn_steps (turn_id, seq, attempt, kind, status, started_at, finished_at,
                                data, error, idempotency_key)
    SELECT x.turn_id,
           COALESCE((SELECT MAX(seq) FROM {s}.turn_steps o WHERE o.turn_id = x.turn_id), 0)
             + x.n,
           x.attempt, x.kind, x.status, x.started, x.finished, x.data::jsonb, x.error, x.key
    FROM unnest(%(s_turns)s::text[], %(s_n)s::int[], %(s_attempts)s::int[],
                %(s_kinds)s::text[], %(s_statuses)s::text[], %(s_started)s::float8[],
                %(s_finished)s::float8[], %(s_data)s::text[], %(s_errors)s::text[],
                %(s_keys)s::text[])
         AS x(turn_id, n, attempt, kind, status, started, finished, data, error, key)
    WHERE x.turn_id IN (SELECT id FROM done)
    ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING 1
)
SELECT id FROM done
"""
"""Terminal states and their final steps for a batch of turns in one statement. Each
finish is fenced by (lease owner, attempt): a runtime that lost the lease changes
nothing. The steps go in only for the turns whose finish passed the fence; one whose
idempotency key is stored already is that step replayed, kept once (as ``record_step``
does) rather than failing the batch."""


FINISH_FIELDS = ("ids", "runs", "attempts", "statuses", "outputs", "outcomes", "errors", "nows")
STEP_FIELDS = (
    "s_turns",
    "s_n",
    "s_attempts",
    "s_kinds",
    "s_statuses",
    "s_started",
    "s_finished",
    "s_data",
    "s_errors",
    "s_keys",
)


def finish_many_params(items: Sequence[Finish]) -> dict[str, list[Any]]:
    """The arrays ``FINISH_MANY_SQL`` unnests: one entry per finish, one per step."""
    finishes = [
        (i.turn_id, i.run_id, i.attempt, i.status.value, i.output, i.outcome, i.error, i.now)
        for i in items
    ]
    steps = [
        (step.turn_id, n, step.attempt, step.kind, step.status, step.started_at,
         step.finished_at, json_text(dict(step.data)), step.error, step.idempotency_key)
        for i in items
        for n, step in enumerate(i.steps, start=1)
    ]  # fmt: skip
    params = {key: [row[k] for row in finishes] for k, key in enumerate(FINISH_FIELDS)}
    params.update({key: [row[k] for row in steps] for k, key in enumerate(STEP_FIELDS)})
    return params


SPENT = "status <> 'awaiting_approval' AND attempt - parked_handbacks >= %(max)s"
"""A turn handed back has spent its attempts: it ran (was not waiting for a person) and
its attempts that ran reach the bound."""

CRASH_PARKED = (
    "status = 'awaiting_approval' AND parked_handbacks < "
    f"{PARKED_CRASHES_FREE_PER_ATTEMPT} * %(max)s"
)
"""A crash while parked spends no attempt, up to ``10 x max_attempts`` hand-backs (the
core's ``PARKED_CRASHES_FREE_PER_ATTEMPT``: a crash loop while parked still ends)."""
CRASH_SPENT = f"NOT ({CRASH_PARKED}) AND attempt - parked_handbacks >= %(max)s"

RELEASE_SQL = """
UPDATE {s}.turn_requests SET
    status = CASE WHEN status = 'canceling' THEN 'canceled'
                  WHEN {spent} THEN 'failed' ELSE 'queued' END,
    outcome = CASE WHEN status = 'canceling' THEN 'canceled'
                   WHEN {spent} THEN 'abandoned' ELSE NULL END,
    error = CASE WHEN status <> 'canceling' AND {spent}
                 THEN format('abandoned after %%s attempt(s): the runtime running it shut '
                             'down before it finished (limit %%s)',
                             attempt - parked_handbacks, %(max)s)
                 ELSE error END,
    finished_at = CASE WHEN status = 'canceling' OR {spent} THEN %(now)s END,
    parked_handbacks = parked_handbacks + (status = 'awaiting_approval')::int,
    lease_owner = NULL, lease_expires = NULL, cancel_requested = false, updated_at = %(now)s
WHERE id = %(turn)s AND lease_owner = %(run)s AND attempt = %(attempt)s AND status IN {active}
""".replace("{spent}", SPENT)
"""Shutdown hands a turn back with its attempt counted, as a crash would (``RECOVER_SQL``):
a turn requeued at every stop must still reach the attempt bound — unless it was
waiting for a person (``parked_handbacks``, migration m004)."""

PARKED_GROUP_SQL = (
    "SELECT thread_group FROM {s}.turn_requests WHERE id = %s AND lease_owner = %s "
    "AND attempt = %s AND status = 'awaiting_approval' FOR UPDATE"
)
GROUP_LOCK_SQL = "SELECT pg_advisory_xact_lock({run_key}, hashtext(%s))"
"""The lock a claim of a capped group holds while it counts and starts turns."""
HOLDING_IN_GROUP_SQL = (
    "SELECT count(*) FROM {s}.turn_requests WHERE thread_group = %s "
    "AND status IN ('running', 'canceling')"
)
RESUME_SQL = "UPDATE {s}.turn_requests SET status = 'running', updated_at = %s WHERE id = %s"

SET_ACTIVE_SQL = (
    "UPDATE {s}.turn_requests SET status = %s, updated_at = %s WHERE id = %s "
    "AND lease_owner = %s AND attempt = %s AND status IN ('running', 'awaiting_approval')"
)
"""Between two active statuses: the thread's row does not change, so no lock is needed."""


LOCK_THREADS_OF_SQL = (
    "SELECT 1 FROM {s}.threads WHERE thread_id IN (SELECT thread_id FROM {s}.turn_requests "
    "WHERE id = ANY(%s)) ORDER BY thread_id FOR UPDATE"
)
"""The thread rows of several requests, in thread order."""


EXPIRED_SQL = (
    "SELECT id, thread_id FROM {s}.turn_requests WHERE status IN {active} "
    "AND (lease_expires < %s OR lease_owner = ANY(%s)) ORDER BY thread_id"
)
RECOVER_SQL = """
UPDATE {s}.turn_requests SET
    status = CASE WHEN status = 'canceling' THEN 'canceled'
                  WHEN {spent} THEN 'failed' ELSE 'queued' END,
    outcome = CASE WHEN status = 'canceling' THEN 'canceled'
                   WHEN {spent} THEN 'abandoned' ELSE NULL END,
    error = CASE WHEN status <> 'canceling' AND {spent}
                 THEN format('abandoned after %%s attempt(s): the runtime running it stopped '
                             'without finishing (limit %%s)',
                             attempt - parked_handbacks, %(max)s)
                 ELSE error END,
    finished_at = CASE WHEN status = 'canceling' OR {spent} THEN %(now)s END,
    parked_handbacks = parked_handbacks + ({parked})::int,
    lease_owner = NULL, lease_expires = NULL, updated_at = %(now)s
WHERE id = ANY(%(ids)s) AND status IN {active}
  AND (lease_expires < %(now)s OR lease_owner = ANY(%(dead)s))
RETURNING id, status
""".replace("{spent}", CRASH_SPENT).replace("{parked}", CRASH_PARKED)
"""Checked again after the thread rows are locked: another node may have been first."""


def recover(
    c: Conn, q: Names, *, now: float, max_attempts: int, dead_runs: Collection[str]
) -> Recovery:
    dead = list(dead_runs)
    expired = c.execute(q(EXPIRED_SQL), (now, dead)).fetchall()
    if not expired:
        return Recovery()
    c.execute(q(LOCK_THREADS_SQL), (sorted({row[1] for row in expired}),))
    rows = c.execute(
        q(RECOVER_SQL),
        {"max": max_attempts, "now": now, "ids": [row[0] for row in expired], "dead": dead},
    ).fetchall()
    order = {row[0]: i for i, row in enumerate(expired)}
    rows.sort(key=lambda row: order[row[0]])
    return Recovery(
        requeued=tuple(r[0] for r in rows if r[1] == TurnStatus.QUEUED),
        failed=tuple(r[0] for r in rows if r[1] == TurnStatus.FAILED),
        canceled=tuple(r[0] for r in rows if r[1] == TurnStatus.CANCELED),
    )


# -- cancellation, steering, heartbeats ------------------------------------------------------


def cancel(c: Conn, q: Names, turn_id: str, now: float, *, reason: str) -> CancelResult:
    """Cancel ``turn_id`` and its descendants, parents before children: each thread row
    is locked before its request is read, and children are looked up after the parent's
    lock (a child being submitted holds that lock shared until it commits)."""
    if c.execute(q("SELECT 1 FROM {s}.turn_requests WHERE id = %s"), (turn_id,)).fetchone() is None:
        raise TurnNotFound(f"no turn request with id {turn_id!r}")

    def status_of(current: str) -> TurnStatus:
        c.execute(q(LOCK_THREAD_OF_SQL), (current,))
        return _status(c, q, current)

    changed = cancel_tree(
        turn_id,
        reason,
        status_of=status_of,
        end_queued=lambda current, end: end_queued(c, q, current, end, now),
        request_cancel=lambda current: c.execute(
            q(
                "UPDATE {s}.turn_requests SET status = 'canceling', cancel_requested = true, "
                "error = %s, updated_at = %s WHERE id = %s"
            ),
            (reason, now, current),
        ),
        children=lambda current: [
            r[0]
            for r in c.execute(
                q("SELECT id FROM {s}.turn_requests WHERE parent = %s ORDER BY seq DESC"),
                (current,),
            )
        ],
    )
    return CancelResult(turn_id, _status(c, q, turn_id), changed)


def _status(c: Conn, q: Names, turn_id: str) -> TurnStatus:
    row = c.execute(q("SELECT status FROM {s}.turn_requests WHERE id = %s"), (turn_id,))
    return TurnStatus(row.fetchone()[0])  # type: ignore[index]


STEERING_WAITS_SQL = (
    "SELECT EXISTS (SELECT 1 FROM {s}.turn_requests q WHERE q.status = 'queued' AND q.steer "
    "AND q.thread_id = (SELECT thread_id FROM {s}.turn_requests WHERE id = %s "
    "AND lease_owner = %s AND attempt = %s AND status IN {active}))"
)
"""Whether ``take_steer`` has anything to take: one read in its own snapshot, so a turn
between two model calls (the common case: nothing queued to steer it) costs one round
trip instead of a locked transaction. A request queued after this read is taken at the
next call, as it would be if it had come after the locked transaction."""


def take_steer(
    c: Conn, q: Names, turn_id: str, *, run_id: str, attempt: int, now: float
) -> list[TurnRequest]:
    c.execute(q(LOCK_THREAD_OF_SQL), (turn_id,))
    owner = c.execute(
        q(
            "SELECT thread_id FROM {s}.turn_requests WHERE id = %s AND lease_owner = %s "
            "AND attempt = %s AND status IN {active}"
        ),
        (turn_id, run_id, attempt),
    ).fetchone()
    if owner is None:
        return []
    rows = c.execute(
        q(
            "SELECT {columns} FROM {s}.turn_requests WHERE thread_id = %s AND status = 'queued' "
            "AND steer ORDER BY seq"
        ),
        (owner[0],),
    ).fetchall()
    steering = [turn_from_row(row) for row in rows]
    return take_steering(turn_id, steering, lambda queued, end: end_queued(c, q, queued, end, now))


def heartbeat(c: Conn, q: Names, run_id: str, *, now: float, lease_expires: float) -> Heartbeat:
    # A run marked lost while it was paused is alive again: it says so.
    c.execute(
        q(
            "UPDATE {s}.runs SET heartbeat_at = %s, status = 'running', stopped_at = NULL "
            "WHERE id = %s AND status IN ('running', 'lost')"
        ),
        (now, run_id),
    )
    rows = c.execute(
        q(
            "UPDATE {s}.turn_requests SET lease_expires = %s WHERE id IN (SELECT id FROM "
            "{s}.turn_requests WHERE lease_owner = %s AND status IN {active} ORDER BY id "
            "FOR UPDATE) RETURNING id, cancel_requested"
        ),
        (lease_expires, run_id),
    ).fetchall()
    return heartbeat_from_rows(rows)


# -- retention -----------------------------------------------------------------------------

ENDED: Final = [s.value for s in TurnStatus if s.is_terminal]


def delete_terminal(c: Conn, q: Names, turn_ids: list[str]) -> list[str]:
    """Delete the terminal requests among ``turn_ids``, their steps, and the threads left
    without requests. The threads' rows are locked first (in a fixed order), as every
    change of a thread's turns does; only queued and active rows are counted, so no
    trigger needs to run."""
    threads = [
        row[0]
        for row in c.execute(
            q(
                "SELECT thread_id FROM {s}.threads WHERE thread_id IN (SELECT thread_id FROM "
                "{s}.turn_requests WHERE id = ANY(%s)) ORDER BY thread_id FOR UPDATE"
            ),
            (turn_ids,),
        )
    ]
    gone = {
        row[0]
        for row in c.execute(
            q("DELETE FROM {s}.turn_requests WHERE id = ANY(%s) AND status = ANY(%s) RETURNING id"),
            (turn_ids, ENDED),
        )
    }
    if not gone:
        return []
    c.execute(q("DELETE FROM {s}.turn_steps WHERE turn_id = ANY(%s)"), (list(gone),))
    c.execute(
        q(
            "DELETE FROM {s}.threads t WHERE t.thread_id = ANY(%s) AND NOT EXISTS "
            "(SELECT 1 FROM {s}.turn_requests r WHERE r.thread_id = t.thread_id)"
        ),
        (threads,),
    )
    return [turn_id for turn_id in turn_ids if turn_id in gone]
