"""Ingress on PostgreSQL: a new turn request, in one statement or in one transaction.

A plain submission is one INSERT whose triggers refuse a thread of another group or
owner (SQLSTATE ``TL001``/``TL002``); any other (a strategy, an overflow rule, a chosen
id or a parent) locks its thread's row first and carries out toolang-core's plan (see
``turns.py`` for the locking rules both keep).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from psycopg.types.json import Jsonb

from toolang_core.store import NewTurnRequest, SubmitResult, SubmitRules
from toolang_core.store.backend import (
    NewTurnValues,
    ThreadState,
    carry_out,
    is_simple as core_is_simple,
    make_room,
    new_turn_values,
    plan_submit,
)
from toolang_store_postgres.schema import Names
from toolang_store_postgres.turns import Conn, cancel, end_queued

INSERT_SQL = (
    "INSERT INTO {s}.turn_requests (id, source, thread_id, thread_group, priority, rank, "
    "input, status, attempt, created_at, updated_at, sender, channel, agent, dedupe_key, "
    "not_before, parent, owner, timeout_seconds, meta, steer) VALUES "
    "(%s, %s, %s, %s, %s, %s, %s, 'queued', 0, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
INSERT_AND_NOTIFY_SQL = (
    f"WITH new AS ({INSERT_SQL} RETURNING 1) SELECT pg_notify(%s, 'submit') FROM new"
)
"""A plain submission: one statement, its own transaction, the wake-up sent at commit."""

WRONG_GROUP = "TL001"
"""SQLSTATE the ``turn_queued`` trigger raises for a thread submitted to another group."""
WRONG_OWNER = "TL002"
"""SQLSTATE the ``turn_queued`` trigger raises for a thread submitted by another owner."""


def is_simple(request: NewTurnRequest, rules: SubmitRules) -> bool:
    """Whether submitting is one INSERT (see toolang-core's ``is_simple``): here also
    without a parent, whose cancellation a submission must not race (see ``submit``)."""
    return request.parent is None and core_is_simple(request, rules)


def insert_params(
    new: NewTurnValues, meta: Mapping[str, Any], steer: bool = False
) -> tuple[object, ...]:
    """The parameters of ``INSERT_SQL`` for a new queued row (``new_turn_values``)."""
    fixed, optional = new
    return (*fixed, *optional, Jsonb(dict(meta)), steer)


def submit(
    c: Conn, q: Names, request: NewTurnRequest, rules: SubmitRules, *, new_id: str, now: float
) -> SubmitResult:
    """A submission that reads before it writes (a strategy, an overflow rule, a chosen
    id or a parent). Its thread's row is created if need be and locked first, so
    submissions to one thread, and claims and finishes on it, take turns."""
    if (
        request.id is not None
        and c.execute(q("SELECT 1 FROM {s}.turn_requests WHERE id = %s"), (request.id,)).fetchone()
    ):
        return SubmitResult(request.id, "exists")
    if request.parent is not None:
        # A cancel of the parent locks the parent's thread before it looks for children:
        # holding that lock (shared) while inserting the child means the cancel either
        # sees this child or happens before it, never in between.
        c.execute(
            q(
                "SELECT 1 FROM {s}.threads WHERE thread_id = "
                "(SELECT thread_id FROM {s}.turn_requests WHERE id = %s) FOR SHARE"
            ),
            (request.parent,),
        )
    c.execute(
        q(
            "INSERT INTO {s}.threads (thread_id, thread_group, owner, created_at, updated_at) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (thread_id) DO NOTHING"
        ),
        (request.thread_id, rules.thread_group, request.owner, now, now),
    )
    thread = c.execute(
        q(
            "SELECT thread_group, running_id, head_id, owner FROM {s}.threads "
            "WHERE thread_id = %s FOR UPDATE"
        ),
        (request.thread_id,),
    ).fetchone()
    assert thread is not None
    plan = plan_submit(request, rules, ThreadState(thread[0], thread[3], thread[1], thread[2]))
    turn_id = request.id or new_id
    return carry_out(
        plan,
        turn_id,
        coalesce=lambda key: _coalesce(c, q, request, key, now),
        interrupt=lambda running, reason: cancel(c, q, running, now, reason=reason),
        make_room=lambda: _make_room(c, q, rules, now),
        insert=lambda: c.execute(
            q(INSERT_SQL),
            insert_params(
                new_turn_values(request, rules, turn_id, now, plan), request.meta, plan.steer
            ),
        ),
    )


def _coalesce(
    c: Conn, q: Names, request: NewTurnRequest, key: str | None, now: float
) -> str | None:
    """Update the thread's queued request with ``key`` to ``request``; its id, if any."""
    existing = c.execute(
        q(
            "SELECT id FROM {s}.turn_requests WHERE thread_id = %s AND status = 'queued' "
            "AND dedupe_key = %s ORDER BY seq LIMIT 1"
        ),
        (request.thread_id, key),
    ).fetchone()
    if existing is None:
        return None
    c.execute(
        q("UPDATE {s}.turn_requests SET input = %s, meta = %s, updated_at = %s WHERE id = %s"),
        (request.input, Jsonb(dict(request.meta)), now, existing[0]),
    )
    return str(existing[0])


def _make_room(c: Conn, q: Names, rules: SubmitRules, now: float) -> tuple[str, ...]:
    """Apply the group's ``max_queued``: submissions to one group take turns (an advisory
    lock per group), so two of them never both see room for one more."""
    if rules.max_queued is None:
        return ()
    c.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (q.queue_key, rules.thread_group))
    return make_room(
        rules,
        queued=lambda: _queued_in_group(c, q, rules.thread_group),
        victim=lambda newest: _victim(c, q, rules.thread_group, newest=newest),
        drop=lambda victim, end: end_queued(c, q, victim, end, now),
    )


def _queued_in_group(c: Conn, q: Names, group: str) -> int:
    row = c.execute(
        q("SELECT count(*) FROM {s}.turn_requests WHERE thread_group = %s AND status = 'queued'"),
        (group,),
    ).fetchone()
    return int(row[0]) if row else 0


def _victim(c: Conn, q: Names, group: str, *, newest: bool) -> str | None:
    """The oldest (newest) queued request of ``group``; one whose thread another
    transaction holds is passed over this time."""
    row = c.execute(
        q(
            "SELECT j.id FROM {s}.turn_requests j JOIN {s}.threads t "
            "ON t.thread_id = j.thread_id WHERE j.thread_group = %s "
            f"AND j.status = 'queued' ORDER BY j.seq{' DESC' if newest else ''} LIMIT 1 "
            "FOR UPDATE OF t SKIP LOCKED"
        ),
        (group,),
    ).fetchone()
    return None if row is None else str(row[0])
