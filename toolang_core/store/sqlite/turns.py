"""Turn-request state changes in the SQLite store, one function per operation.

Every function runs inside the caller's ``BEGIN IMMEDIATE`` transaction; SQLite's
single writer serialises them, so the checks and the changes they guard are atomic.
The ``threads`` row of each thread caches its running turn and its head (best queued
request by ``(rank, seq)``); ``thread_groups`` counts running and queued requests.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from toolang_core.store.errors import SubmitRejected, TurnNotFound
from toolang_core.store.sqlite.schema import ACTIVE_SQL, TURN_COLUMNS
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


def dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def turn_from_row(row: Sequence[Any]) -> TurnRequest:
    """Build a :class:`TurnRequest` from a row selected with ``TURN_COLUMNS``."""
    (
        id_,
        seq,
        source,
        thread_id,
        group,
        priority,
        rank,
        input_,
        status,
        attempt,
        created,
        updated,
        sender,
        channel,
        agent,
        dedupe,
        not_before,
        parent,
        owner,
        timeout,
        meta,
        steer,
        started,
        finished,
        lease_owner,
        lease_expires,
        cancel,
        output,
        outcome,
        error,
    ) = row
    return TurnRequest(
        id=id_,
        seq=seq,
        source=source,
        thread_id=thread_id,
        thread_group=group,
        priority=priority,
        rank=rank,
        input=input_,
        status=TurnStatus(status),
        attempt=attempt,
        created_at=created,
        updated_at=updated,
        sender=sender,
        channel=channel,
        agent=agent,
        dedupe_key=dedupe,
        not_before=not_before or None,
        parent=parent,
        owner=owner,
        timeout_seconds=timeout,
        meta=json.loads(meta),
        steer=bool(steer),
        started_at=started,
        finished_at=finished,
        lease_owner=lease_owner,
        lease_expires=lease_expires,
        cancel_requested=bool(cancel),
        output=output,
        outcome=outcome,
        error=error,
    )


def refresh_head(c: sqlite3.Connection, thread_id: str, now: float) -> None:
    """Point the thread's row at its best queued request (or at none)."""
    row = c.execute(
        "SELECT id, rank, seq, COALESCE(not_before, 0) FROM turn_requests "
        "WHERE thread_id = ? AND status = 'queued' ORDER BY rank, seq LIMIT 1",
        (thread_id,),
    ).fetchone()
    head = row if row is not None else (None, None, None, 0)
    c.execute(
        "UPDATE threads SET head_id = ?, head_rank = ?, head_seq = ?, head_not_before = ?, "
        "updated_at = ? WHERE thread_id = ?",
        (*head, now, thread_id),
    )


def _end_queued(
    c: sqlite3.Connection,
    turn_id: str,
    *,
    status: TurnStatus,
    outcome: str,
    error: str | None,
    now: float,
) -> None:
    """Give a queued request a terminal status without it ever running."""
    row = c.execute(
        "UPDATE turn_requests SET status = ?, outcome = ?, error = ?, finished_at = ?, "
        "updated_at = ? WHERE id = ? AND status = 'queued' RETURNING thread_id, thread_group",
        (status.value, outcome, error, now, now, turn_id),
    ).fetchone()
    if row is None:
        return
    c.execute("UPDATE thread_groups SET queued = queued - 1 WHERE name = ?", (row[1],))
    refresh_head(c, row[0], now)


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
        "SELECT thread_group, running_id, head_id FROM threads WHERE thread_id = ?",
        (request.thread_id,),
    ).fetchone()
    if thread is not None and thread[0] != rules.thread_group:
        raise SubmitRejected(
            f"thread {request.thread_id!r} belongs to group {thread[0]!r}, "
            f"not {rules.thread_group!r}",
            reason="wrong_group",
        )
    running_id = thread[1] if thread else None
    head_id = thread[2] if thread else None
    dedupe_key = request.dedupe_key
    if rules.strategy == "coalesce" and dedupe_key is None:
        dedupe_key = request.source
    if rules.strategy == "reject" and (running_id or head_id):
        busy_with = running_id or head_id
        raise SubmitRejected(
            f"thread {request.thread_id!r} is busy with request {busy_with} and its "
            "strategy is 'reject'; try again when it is idle",
            reason="thread_busy",
        )
    if rules.strategy == "coalesce":
        existing = c.execute(
            "SELECT id FROM turn_requests WHERE thread_id = ? AND dedupe_key = ? "
            "AND status = 'queued' ORDER BY seq LIMIT 1",
            (request.thread_id, dedupe_key),
        ).fetchone()
        if existing is not None:
            c.execute(
                "UPDATE turn_requests SET input = ?, meta = ?, updated_at = ? WHERE id = ?",
                (request.input, dumps(dict(request.meta)), now, existing[0]),
            )
            return SubmitResult(existing[0], "coalesced")
    interrupted: tuple[str, ...] = ()
    if rules.strategy == "interrupt" and running_id:
        cancel(c, running_id, now, reason="interrupted by a newer request on its thread")
        interrupted = (running_id,)
    dropped = _make_room(c, rules, now)
    steer = rules.strategy == "steer" and running_id is not None
    turn_id = request.id or new_id
    eligible = max(now, request.not_before or 0.0)
    rank = rank_for(eligible, rules.priority, rules.aging_seconds)
    seq = c.execute(
        "INSERT INTO turn_requests (id, source, thread_id, thread_group, priority, rank, input, "
        "status, attempt, created_at, updated_at, sender, channel, agent, dedupe_key, "
        "not_before, parent, owner, timeout_seconds, meta, steer) VALUES "
        "(?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
        (
            turn_id,
            request.source,
            request.thread_id,
            rules.thread_group,
            rules.priority,
            rank,
            request.input,
            now,
            now,
            request.sender,
            request.channel,
            request.agent,
            dedupe_key,
            request.not_before,
            request.parent,
            request.owner,
            request.timeout_seconds,
            dumps(dict(request.meta)),
            int(steer),
        ),
    ).fetchone()[0]
    not_before = request.not_before or 0.0
    if thread is None:
        c.execute(
            "INSERT INTO threads (thread_id, thread_group, head_id, head_rank, head_seq, "
            "head_not_before, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (request.thread_id, rules.thread_group, turn_id, rank, seq, not_before, now, now),
        )
    else:
        c.execute(
            "UPDATE threads SET head_id = ?, head_rank = ?, head_seq = ?, head_not_before = ?, "
            "updated_at = ? WHERE thread_id = ? AND (head_id IS NULL OR head_rank > ? "
            "OR (head_rank = ? AND head_seq > ?))",
            (turn_id, rank, seq, not_before, now, request.thread_id, rank, rank, seq),
        )
    c.execute(
        "INSERT INTO thread_groups (name, queued) VALUES (?, 1) "
        "ON CONFLICT (name) DO UPDATE SET queued = queued + 1",
        (rules.thread_group,),
    )
    return SubmitResult(turn_id, "queued", dropped=dropped, interrupted=interrupted, steer=steer)


def _make_room(c: sqlite3.Connection, rules: SubmitRules, now: float) -> tuple[str, ...]:
    if rules.max_queued is None:
        return ()
    dropped: list[str] = []
    while True:
        row = c.execute(
            "SELECT queued FROM thread_groups WHERE name = ?", (rules.thread_group,)
        ).fetchone()
        queued = row[0] if row else 0
        if queued < rules.max_queued:
            return tuple(dropped)
        order = {"drop_oldest": "seq", "replace_pending": "seq DESC"}.get(rules.overflow)
        victim = None
        if order is not None:
            victim = c.execute(
                f"SELECT id FROM turn_requests WHERE thread_group = ? AND status = 'queued' "
                f"ORDER BY {order} LIMIT 1",
                (rules.thread_group,),
            ).fetchone()
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


# -- admission -------------------------------------------------------------------------


def claim(
    c: sqlite3.Connection,
    *,
    run_id: str,
    limit: int,
    now: float,
    lease_seconds: float,
    caps: Mapping[str, int],
    only: Collection[str] | None,
) -> list[TurnRequest]:
    running = dict(c.execute("SELECT name, running FROM thread_groups WHERE queued > 0"))
    candidates: list[tuple[float, int, str, str, str]] = []
    if only is not None:
        for turn_id in only:
            row = c.execute(
                "SELECT t.head_rank, t.head_seq, t.head_id, t.thread_id, t.thread_group "
                "FROM threads t JOIN turn_requests r ON r.thread_id = t.thread_id "
                "WHERE r.id = ? AND t.head_id = r.id AND t.running_id IS NULL "
                "AND t.head_not_before <= ?",
                (turn_id, now),
            ).fetchone()
            if row is not None:
                candidates.append(row)
    else:
        for group, group_running in running.items():
            cap = caps.get(group)
            budget = limit if cap is None else min(limit, cap - group_running)
            if budget <= 0:
                continue
            candidates.extend(
                c.execute(
                    "SELECT head_rank, head_seq, head_id, thread_id, thread_group FROM threads "
                    "WHERE thread_group = ? AND running_id IS NULL AND head_id IS NOT NULL "
                    "AND head_not_before <= ? ORDER BY head_rank, head_seq LIMIT ?",
                    (group, now, budget),
                )
            )
    candidates.sort()
    taken: Counter[str] = Counter()
    claimed: list[TurnRequest] = []
    for _rank, _seq, turn_id, thread_id, group in candidates:
        if len(claimed) >= limit:
            break
        cap = caps.get(group)
        if cap is not None and running.get(group, 0) + taken[group] >= cap:
            continue
        row = c.execute(
            "UPDATE turn_requests SET status = 'running', attempt = attempt + 1, "
            "lease_owner = ?, lease_expires = ?, started_at = ?, updated_at = ? "
            f"WHERE id = ? AND status = 'queued' RETURNING {TURN_COLUMNS}",
            (run_id, now + lease_seconds, now, now, turn_id),
        ).fetchone()
        if row is None:
            continue
        c.execute(
            "UPDATE threads SET running_id = ?, turns = turns + 1 WHERE thread_id = ?",
            (turn_id, thread_id),
        )
        refresh_head(c, thread_id, now)
        taken[group] += 1
        claimed.append(turn_from_row(row))
    for group, count in taken.items():
        c.execute(
            "UPDATE thread_groups SET running = running + ?, queued = queued - ? WHERE name = ?",
            (count, count, group),
        )
    return claimed


def _leave_active(c: sqlite3.Connection, thread_id: str, group: str, turn_id: str) -> None:
    c.execute(
        "UPDATE threads SET running_id = NULL WHERE thread_id = ? AND running_id = ?",
        (thread_id, turn_id),
    )
    c.execute("UPDATE thread_groups SET running = running - 1 WHERE name = ?", (group,))


def finish(
    c: sqlite3.Connection,
    turn_id: str,
    *,
    run_id: str,
    attempt: int,
    status: TurnStatus,
    now: float,
    output: str | None,
    outcome: str | None,
    error: str | None,
) -> bool:
    if not status.is_terminal:
        raise ValueError(f"finish needs a terminal status, not {status.value!r}")
    row = c.execute(
        "UPDATE turn_requests SET status = ?, output = ?, outcome = ?, error = ?, "
        "finished_at = ?, updated_at = ?, lease_owner = NULL, lease_expires = NULL "
        f"WHERE id = ? AND lease_owner = ? AND attempt = ? AND status IN {ACTIVE_SQL} "
        "RETURNING thread_id, thread_group",
        (status.value, output, outcome, error, now, now, turn_id, run_id, attempt),
    ).fetchone()
    if row is None:
        return False
    _leave_active(c, row[0], row[1], turn_id)
    c.execute("UPDATE threads SET updated_at = ? WHERE thread_id = ?", (now, row[0]))
    return True


def release(c: sqlite3.Connection, turn_id: str, *, run_id: str, attempt: int, now: float) -> bool:
    row = c.execute(
        "UPDATE turn_requests SET status = 'queued', attempt = attempt - 1, lease_owner = NULL, "
        "lease_expires = NULL, cancel_requested = 0, updated_at = ? "
        f"WHERE id = ? AND lease_owner = ? AND attempt = ? AND status IN {ACTIVE_SQL} "
        "RETURNING thread_id, thread_group",
        (now, turn_id, run_id, attempt),
    ).fetchone()
    if row is None:
        return False
    _leave_active(c, row[0], row[1], turn_id)
    c.execute("UPDATE thread_groups SET queued = queued + 1 WHERE name = ?", (row[1],))
    refresh_head(c, row[0], now)
    return True


def set_active_status(
    c: sqlite3.Connection,
    turn_id: str,
    *,
    run_id: str,
    attempt: int,
    status: TurnStatus,
    now: float,
) -> bool:
    if status not in (TurnStatus.RUNNING, TurnStatus.AWAITING_APPROVAL):
        raise ValueError(f"an active turn can move to running or awaiting_approval, not {status}")
    return bool(
        c.execute(
            "UPDATE turn_requests SET status = ?, updated_at = ? WHERE id = ? AND lease_owner = ? "
            "AND attempt = ? AND status IN ('running', 'awaiting_approval')",
            (status.value, now, turn_id, run_id, attempt),
        ).rowcount
    )


def recover(
    c: sqlite3.Connection, *, now: float, max_attempts: int, dead_runs: Collection[str]
) -> Recovery:
    dead = list(dead_runs)
    marks = ",".join("?" * len(dead))
    dead_clause = f" OR lease_owner IN ({marks})" if dead else ""
    rows = c.execute(
        f"SELECT id, thread_id, thread_group, status, attempt FROM turn_requests "
        f"WHERE status IN {ACTIVE_SQL} AND (lease_expires < ?{dead_clause})",
        (now, *dead),
    ).fetchall()
    requeued, failed, canceled = [], [], []
    for turn_id, thread_id, group, status, attempt in rows:
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
            "UPDATE turn_requests SET status = ?, outcome = ?, error = ?, lease_owner = NULL, "
            "lease_expires = NULL, updated_at = ?, "
            "finished_at = CASE WHEN ? = 'queued' THEN NULL ELSE ? END WHERE id = ?",
            (new.value, outcome, error, now, new.value, now, turn_id),
        )
        _leave_active(c, thread_id, group, turn_id)
        if new is TurnStatus.QUEUED:
            c.execute("UPDATE thread_groups SET queued = queued + 1 WHERE name = ?", (group,))
            refresh_head(c, thread_id, now)
    return Recovery(tuple(requeued), tuple(failed), tuple(canceled))


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
        status_row = c.execute(
            "SELECT status FROM turn_requests WHERE id = ?", (current,)
        ).fetchone()
        status = TurnStatus(status_row[0])
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
        f"AND status IN {ACTIVE_SQL}",
        (turn_id, run_id, attempt),
    ).fetchone()
    if owner is None:
        return []
    rows = c.execute(
        f"SELECT {TURN_COLUMNS} FROM turn_requests WHERE thread_id = ? AND status = 'queued' "
        "AND steer = 1 ORDER BY seq",
        (owner[0],),
    ).fetchall()
    taken = []
    for row in rows:
        turn = turn_from_row(row)
        _end_queued(c, turn.id, status=TurnStatus.STEERED, outcome="steered", error=None, now=now)
        c.execute(
            "UPDATE turn_requests SET output = ? WHERE id = ?",
            (f"delivered into running turn {turn_id}", turn.id),
        )
        taken.append(turn)
    return taken


def heartbeat(c: sqlite3.Connection, run_id: str, *, now: float, lease_expires: float) -> Heartbeat:
    c.execute("UPDATE runs SET heartbeat_at = ? WHERE id = ?", (now, run_id))
    c.execute(
        "UPDATE turn_requests SET lease_expires = ? WHERE lease_owner = ? "
        f"AND status IN {ACTIVE_SQL}",
        (lease_expires, run_id),
    )
    rows = c.execute(
        f"SELECT id, cancel_requested FROM turn_requests WHERE lease_owner = ? "
        f"AND status IN {ACTIVE_SQL}",
        (run_id,),
    ).fetchall()
    return Heartbeat(
        owned=frozenset(r[0] for r in rows),
        cancel_requested=frozenset(r[0] for r in rows if r[1]),
    )
