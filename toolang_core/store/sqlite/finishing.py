"""Finishing in the SQLite store: terminal states and final steps, fenced, in batches.

A batch of terminal states is one statement (``UPDATE … FROM (VALUES …)``), each
fenced by the turn's lease owner and attempt; the final steps of the turns it recorded
follow in a second, in the same transaction, so a turn's terminal state and its last
steps are stored together or not at all. The functions taking a connection run inside
the caller's ``BEGIN IMMEDIATE`` transaction.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence

from toolang_core.store.json_text import dumps_data
from toolang_core.store.sqlite.schema import active
from toolang_core.store.sqlite.turns import BATCH_SQL_SIZES
from toolang_core.store.types import Finish, StepRecord

FINISH_CHUNK = 1_000
"""Turns (or final steps) one statement of ``finish_many`` records: 8 or 10 parameters
each, well under SQLite's limit of 32,766."""


FINISH_SQL = (
    "UPDATE OR IGNORE turn_requests SET status = ?, output = ?, outcome = ?, error = ?, "
    "finished_at = ?, updated_at = ?, lease_owner = NULL, lease_expires = NULL "
    f"WHERE id = ? AND lease_owner = ? AND attempt = ? AND {active()}"
)
"""One statement, atomic on its own: fenced by (lease owner, attempt)."""


@functools.lru_cache(maxsize=2 * BATCH_SQL_SIZES)
def finish_batch_sql(count: int, *, reasons: bool = True) -> str:
    """Finish ``count`` turns of distinct ids in one statement, each fenced like
    ``FINISH_SQL``; RETURNING names the ones recorded.

    Without ``reasons`` (no turn of the batch has an outcome or an error: the usual
    batch) those two are written NULL by the statement instead of bound per turn
    (binding a ``None`` costs an adapter lookup; see ``OPTIONAL_COLUMNS``).
    """
    if reasons:
        columns, marks, set_reasons = "outcome, error, ", "?, ?, ", "v.outcome, error = v.error"
    else:
        columns, marks, set_reasons = "", "", "NULL, error = NULL"
    rows = ",".join([f"(?, ?, ?, ?, ?, {marks}?)"] * count)
    return (
        f"WITH v(id, run_id, attempt, status, output, {columns}now) AS (VALUES {rows}) "
        "UPDATE OR IGNORE turn_requests SET status = v.status, output = v.output, "
        f"outcome = {set_reasons}, finished_at = v.now, updated_at = v.now, "
        "lease_owner = NULL, lease_expires = NULL FROM v "
        "WHERE turn_requests.id = v.id AND turn_requests.lease_owner = v.run_id "
        f"AND turn_requests.attempt = v.attempt AND {active('turn_requests')} "
        "RETURNING turn_requests.id"
    )


FINAL_STEP_SQL = (
    "INSERT OR IGNORE INTO turn_steps (turn_id, seq, attempt, kind, status, started_at, "
    "finished_at, data, error, idempotency_key) VALUES ("
    "?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM turn_steps WHERE turn_id = ?1), "
    "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
)
"""A step stored with its turn's terminal state, after the fenced finish succeeded. One
whose idempotency key is stored already is that step replayed: it is kept once (as
``record_step`` does), rather than failing the finishes of the whole batch."""


@functools.lru_cache(maxsize=2 * BATCH_SQL_SIZES)
def final_steps_sql(count: int, *, keyed: bool = True) -> str:
    """``FINAL_STEP_SQL`` for ``count`` steps of distinct turns in one statement (each
    numbers its step from its own turn's steps, which the others do not change).
    Without ``keyed`` (no step has an error or an idempotency key) both are left NULL
    instead of bound."""
    optional = ", error, idempotency_key" if keyed else ""
    row = (
        "(?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM turn_steps WHERE turn_id = ?), "
        f"?, ?, ?, ?, ?, ?{', ?, ?' if keyed else ''})"
    )
    return (
        "INSERT OR IGNORE INTO turn_steps (turn_id, seq, attempt, kind, status, started_at, "
        f"finished_at, data{optional}) VALUES {','.join([row] * count)}"
    )


def finish_many(c: sqlite3.Connection, items: Sequence[Finish]) -> list[bool]:
    """Record a batch of terminal states, then the final steps of the turns recorded;
    one result per item (``False``: fenced, another runtime owns the turn now)."""
    if len({i.turn_id for i in items}) < len(items):  # the same turn twice: in order
        return [finish_one(c, i) for i in items]
    # .status._value_, not .value: a property lookup, twice as slow
    if any(i.outcome is not None or i.error is not None for i in items):
        width = 8
        params = [
            p
            for i in items
            for p in (
                i.turn_id,
                i.run_id,
                i.attempt,
                i.status._value_,
                i.output,
                i.outcome,
                i.error,
                i.now,
            )
        ]
    else:  # the usual batch: no reasons to bind (see finish_batch_sql)
        width = 6
        params = [
            p
            for i in items
            for p in (i.turn_id, i.run_id, i.attempt, i.status._value_, i.output, i.now)
        ]
    recorded: set[str] = set()
    for start in range(0, len(params), FINISH_CHUNK * width):
        chunk = params[start : start + FINISH_CHUNK * width]
        sql = finish_batch_sql(len(chunk) // width, reasons=width == 8)
        recorded.update(row[0] for row in c.execute(sql, chunk))
    # The steps only with the fenced finish: both or neither.
    final_steps(c, [s for i in items if i.turn_id in recorded for s in i.steps])
    return [i.turn_id in recorded for i in items]


def final_steps(c: sqlite3.Connection, steps: list[StepRecord]) -> None:
    """Store the final steps of turns just recorded (each numbered after its turn's)."""
    if len({step.turn_id for step in steps}) < len(steps):  # a turn's steps: in order
        for step in steps:
            c.execute(FINAL_STEP_SQL, step_params(step))
        return
    keyed = any(s.error is not None or s.idempotency_key is not None for s in steps)
    for start in range(0, len(steps), FINISH_CHUNK):
        chunk = steps[start : start + FINISH_CHUNK]
        params = [p for step in chunk for p in (step.turn_id, *step_params(step, keyed=keyed))]
        c.execute(final_steps_sql(len(chunk), keyed=keyed), params)


def finish_one(c: sqlite3.Connection, i: Finish) -> bool:
    """One turn's terminal state and final steps (for a batch naming a turn twice)."""
    cursor = c.execute(
        FINISH_SQL,
        (
            i.status.value,
            i.output,
            i.outcome,
            i.error,
            i.now,
            i.now,
            i.turn_id,
            i.run_id,
            i.attempt,
        ),
    )
    if cursor.rowcount != 1:
        return False
    for step in i.steps:  # the steps only with the fenced finish: both or neither
        c.execute(FINAL_STEP_SQL, step_params(step))
    return True


def step_params(step: StepRecord, *, keyed: bool = True) -> tuple[object, ...]:
    """A step's columns after its turn id and sequence number (without ``keyed``: not
    its error and idempotency key, both ``None``)."""
    head = (
        step.turn_id,
        step.attempt,
        step.kind,
        step.status,
        step.started_at,
        step.finished_at,
        dumps_data(step.data),
    )
    return (*head, step.error, step.idempotency_key) if keyed else head
