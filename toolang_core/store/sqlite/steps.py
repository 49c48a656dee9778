"""A turn's steps in the SQLite store: recorded fenced by the turn's lease, completed,
found by idempotency key. The functions take the connection; the store holds its lock
and opens the transactions around them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from toolang_core.store.base import numbered_together
from toolang_core.store.json_text import dumps_data
from toolang_core.store.rows import STEP_COLUMNS, step_from_row
from toolang_core.store.sqlite import finishing, turns
from toolang_core.store.types import StepRecord


def record(c: sqlite3.Connection, step: StepRecord, run_id: str) -> StepRecord | None:
    """Store ``step`` numbered (``None`` when this run does not hold the turn); a step
    whose idempotency key was recorded before is that stored step, replayed."""
    try:
        row = c.execute(turns.RECORD_STEP_SQL, (*finishing.step_params(step), run_id)).fetchone()
    except sqlite3.IntegrityError:  # this idempotency key was recorded before: replay it
        return find(c, step.idempotency_key or "")
    return None if row is None else step.numbered(row[0])


def insert_one(c: sqlite3.Connection, step: StepRecord, run_id: str) -> int | StepRecord | None:
    """For :func:`toolang_core.store.base.insert_each`: the new step's number, the stored
    step when its key was recorded before, ``None`` when fenced out."""
    params = (*finishing.step_params(step), run_id)
    try:
        row = c.execute(turns.RECORD_STEP_SQL, params).fetchone()
    except sqlite3.IntegrityError:  # recorded before: replay it
        found = find(c, step.idempotency_key or "")
        if found is None:
            raise
        return found
    return None if row is None else int(row[0])


def insert_together(
    c: sqlite3.Connection, steps: Sequence[StepRecord], run_id: str
) -> list[StepRecord] | None:
    """The steps of one turn in one statement; ``None`` when one's idempotency key is
    stored already (a replay: store them one by one).

    :raises FencedOut: when this run does not hold the turn."""
    first = steps[0]
    params: list[object] = [first.turn_id, first.attempt, run_id]
    for step in steps:
        params += finishing.step_params(step)[2:]  # after its turn and attempt
    try:
        rows = c.execute(turns.record_steps_sql(len(steps)), params).fetchall()
    except sqlite3.IntegrityError:
        return None
    return numbered_together(steps, rows)


def complete(c: sqlite3.Connection, step: StepRecord, run_id: str) -> StepRecord | None:
    """Store an intent's result (``None`` when this run does not hold the turn)."""
    row = c.execute(
        turns.COMPLETE_STEP_SQL,
        (
            step.turn_id,
            step.attempt,
            step.status,
            step.finished_at,
            dumps_data(step.data),
            step.error,
            step.idempotency_key,
            run_id,
        ),
    ).fetchone()
    return None if row is None else step.numbered(row[0])


def find(c: sqlite3.Connection, key: str) -> StepRecord | None:
    row = c.execute(
        f"SELECT {STEP_COLUMNS} FROM turn_steps WHERE idempotency_key = ?", (key,)
    ).fetchone()
    return None if row is None else step_from_row(row)


def of_turn(c: sqlite3.Connection, turn_id: str) -> list[StepRecord]:
    rows = c.execute(
        f"SELECT {STEP_COLUMNS} FROM turn_steps WHERE turn_id = ? ORDER BY seq", (turn_id,)
    ).fetchall()
    return [step_from_row(r) for r in rows]
