"""Admission in the SQLite store: a claim starts the best heads of idle threads.

A claim walks the heads index group by group (one seek per group, however many threads
wait), takes the best ``(rank, seq)`` heads of idle threads within the free slots and
the groups' caps, starts them in one statement and moves their threads' heads in
another. It runs inside the caller's ``BEGIN IMMEDIATE`` transaction.
"""

from __future__ import annotations

import functools
import sqlite3
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import attrs

from toolang_core.store.base import ClaimRequest
from toolang_core.store.rows import TURN_COLUMNS, turn_from_row
from toolang_core.store.sqlite.schema import active
from toolang_core.store.sqlite.turns import BATCH_SQL_SIZES, RUNNING_BY_GROUP_SQL
from toolang_core.store.types import TurnRequest

DATA_VERSION_SQL = "PRAGMA data_version"
# Each step finds the next group name in the heads index: one seek per group, however
# many threads wait.
GROUPS_WITH_HEADS_SQL = """
WITH RECURSIVE g(name) AS (
    SELECT MIN(thread_group) FROM threads WHERE head_id IS NOT NULL
    UNION ALL
    SELECT (SELECT MIN(thread_group) FROM threads
            WHERE head_id IS NOT NULL AND thread_group > g.name)
    FROM g WHERE g.name IS NOT NULL
)
SELECT name FROM g WHERE name IS NOT NULL
"""
# Heads of busy threads stay in the heads index; a claim steps over them (at most as
# many as there are active turns) instead of every start and finish rewriting the index.
_IDLE_THREAD = (
    f"NOT EXISTS (SELECT 1 FROM turn_requests a WHERE a.thread_id = t.thread_id AND {active('a')})"
)
# A candidate is its thread's head as the threads row has it; the claim's UPDATE
# returns the rows it started.
HEADS_IN_GROUP_SQL = (
    "SELECT t.head_rank, t.head_seq, t.thread_group FROM threads t "
    "WHERE t.thread_group = ? AND t.head_id IS NOT NULL AND t.head_not_before <= ? "
    f"AND {_IDLE_THREAD} ORDER BY t.head_rank, t.head_seq LIMIT ?"
)
HEAD_BY_ID_SQL = (
    "SELECT t.head_rank, t.head_seq, t.thread_group "
    "FROM turn_requests r JOIN threads t ON t.thread_id = r.thread_id "
    f"WHERE r.id = ? AND t.head_id = r.id AND t.head_not_before <= ? AND {_IDLE_THREAD}"
)


@functools.lru_cache(maxsize=BATCH_SQL_SIZES)
def start_sql(count: int) -> str:
    """Start ``count`` chosen requests (by ``seq``) in one statement.

    OR IGNORE: a request whose thread has an active turn after all stays queued (the
    unique index still refuses it, and the rows after it are still started); with
    nothing to abort, SQLite keeps no statement journal inside the claim's transaction.
    RETURNING gives the rows it started, as they are now.
    """
    return (
        "UPDATE OR IGNORE turn_requests SET status = 'running', attempt = attempt + 1, "
        "lease_owner = ?, lease_expires = ?, started_at = ?, updated_at = ? "
        f"WHERE seq IN ({','.join('?' * count)}) AND status = 'queued' RETURNING {TURN_COLUMNS}"
    )


@functools.lru_cache(maxsize=BATCH_SQL_SIZES)
def next_head_sql(count: int) -> str:
    """After a claim, the next head of each of the ``count`` threads it started (the
    claim's batch, in place of a trigger per row), in one statement."""
    return (
        "UPDATE threads SET turns = turns + 1, updated_at = ?, "
        "(head_id, head_rank, head_seq, head_not_before) = ("
        "SELECT id, rank, seq, COALESCE(not_before, 0) FROM turn_requests "
        "WHERE thread_id = threads.thread_id AND status = 'queued' ORDER BY rank, seq LIMIT 1) "
        f"WHERE thread_id IN ({','.join('?' * count)})"
    )


@attrs.frozen
class Room:
    """What a claim's read before its write transaction saw: the groups with heads, the
    running turns by group (``None``: not read) and the database's ``data_version``."""

    groups: list[str]
    running: dict[str, int] | None
    version: int


def may_claim(c: sqlite3.Connection, request: ClaimRequest) -> Room | None:
    """Whether a claim could start anything, read before its write transaction: some
    group has a queued request and room under its cap (``None``: nothing to start).
    Most passes of a busy runtime whose groups are full (woken by a submission, a
    record, another turn's end) then need no transaction. Only the store's one runtime
    starts and ends turns: room that frees after this read is its own doing, and its
    next pass claims into it (a request queued meanwhile wakes it too).

    The :class:`Room` it returns lets :func:`claim` skip reading the same again when no
    other connection has committed since (``PRAGMA data_version`` unchanged).
    """
    version = c.execute(DATA_VERSION_SQL).fetchone()[0]
    groups = [group for (group,) in c.execute(GROUPS_WITH_HEADS_SQL)]
    if not groups:
        return None
    caps = request.caps
    if request.only is not None or any(caps.get(group) is None for group in groups):
        return Room(groups, None, version)
    running = dict(c.execute(RUNNING_BY_GROUP_SQL))
    if not any(running.get(group, 0) < caps[group] for group in groups):
        return None
    return Room(groups, running, version)


def claim(
    c: sqlite3.Connection, request: ClaimRequest, seen: Room | None = None
) -> list[TurnRequest]:
    """Start the best heads of idle threads ``request`` allows, in order.

    ``seen``: what :func:`may_claim` read on this connection just before; used when no
    other connection has committed since (this one wrote nothing in between: the
    store's statements run on one thread), else read again.
    """
    limit, now, caps = request.limit, request.now, request.caps
    if seen is not None and c.execute(DATA_VERSION_SQL).fetchone()[0] != seen.version:
        seen = None
    running = seen.running if seen is not None else None
    if running is None:
        running = dict(c.execute(RUNNING_BY_GROUP_SQL))
    candidates = _candidates(
        c,
        now=now,
        limit=limit,
        caps=caps,
        running=running,
        only=request.only,
        groups=None if seen is None else seen.groups,
    )
    taken: Counter[str] = Counter()
    chosen: list[Sequence[Any]] = []
    for row in candidates:  # best first, within the free slots and the group caps
        if len(chosen) >= limit:
            break
        cap = caps.get(row[2])
        if cap is None or running.get(row[2], 0) + taken[row[2]] < cap:
            chosen.append(row)
            taken[row[2]] += 1
    if not chosen:
        return []
    # One statement starts them all. A request refused after all (its thread has an
    # active turn) stays queued; its slot waits for the next claim.
    lease_expires = now + request.lease_seconds
    params = (request.run_id, lease_expires, now, now, *(row[1] for row in chosen))
    claimed = [turn_from_row(row) for row in c.execute(start_sql(len(chosen)), params)]
    claimed.sort(key=lambda turn: (turn.rank, turn.seq))  # RETURNING keeps no order
    if claimed:
        threads = [turn.thread_id for turn in claimed]
        c.execute(next_head_sql(len(threads)), (now, *threads))
    return claimed


def _candidates(
    c: sqlite3.Connection,
    *,
    now: float,
    limit: int,
    caps: Mapping[str, int],
    running: Mapping[str, int],
    only: Collection[str] | None,
    groups: list[str] | None,
) -> list[Sequence[Any]]:
    """Heads of idle threads that may start now, best ``(rank, seq)`` first."""
    candidates: list[Sequence[Any]] = []
    if only is not None:
        for turn_id in only:
            row = c.execute(HEAD_BY_ID_SQL, (turn_id, now)).fetchone()
            if row is not None:
                candidates.append(row)
    else:
        if groups is None:
            groups = [group for (group,) in c.execute(GROUPS_WITH_HEADS_SQL).fetchall()]
        for group in groups:
            cap = caps.get(group)
            budget = limit if cap is None else min(limit, cap - running.get(group, 0))
            if budget > 0:
                candidates.extend(c.execute(HEADS_IN_GROUP_SQL, (group, now, budget)))
    candidates.sort(key=lambda row: (row[0], row[1]))
    return candidates
