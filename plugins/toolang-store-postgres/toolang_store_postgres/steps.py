"""A turn's steps on PostgreSQL: recorded fenced by the turn's lease (one at a time or
several of one turn in one statement), completed, found by idempotency key.

:class:`TurnSteps` is bound to the store's
:class:`~toolang_store_postgres.connection.Database`; each of its methods opens its own
statement or transaction. The SQLite store's counterpart is
``toolang_core/store/sqlite/steps.py`` (functions over a connection whose lock the store
holds); what both decide is shared through :mod:`toolang_core.store.backend`
(:func:`insert_each`, :func:`numbered_together`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
from psycopg import errors as pg_errors
from psycopg.types.json import Jsonb

from toolang_core.store import StepRecord
from toolang_core.store.backend import (
    STEP_COLUMNS,
    insert_each,
    numbered_together,
    step_from_row,
)
from toolang_store_postgres.connection import Conn, Database

RECORD_STEP_SQL = (
    "INSERT INTO {s}.turn_steps (turn_id, seq, attempt, kind, status, started_at, "
    "finished_at, data, error, idempotency_key) "
    "SELECT %(turn)s, (SELECT COALESCE(MAX(seq), 0) + 1 FROM {s}.turn_steps "
    "WHERE turn_id = %(turn)s), %(attempt)s, %(kind)s, %(status)s, %(started)s, "
    "%(finished)s, %(data)s, %(error)s, %(key)s WHERE EXISTS (SELECT 1 FROM {s}.turn_requests "
    "WHERE id = %(turn)s AND lease_owner = %(run)s AND attempt = %(attempt)s "
    "AND status IN {active}) RETURNING seq"
)
"""One statement: the fence check, the next sequence number and the insert together."""

RECORD_STEP_OR_SKIP_SQL = RECORD_STEP_SQL.replace(
    " RETURNING seq",
    " ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING seq",
)
"""``RECORD_STEP_SQL`` inside a batch: a key recorded before inserts nothing (instead of
failing the statement, which would need a savepoint — two round trips — per step)."""

RECORD_STEPS_SQL = (
    "INSERT INTO {s}.turn_steps (turn_id, seq, attempt, kind, status, started_at, "
    "finished_at, data, error, idempotency_key) "
    "SELECT %(turn)s, (SELECT COALESCE(MAX(seq), 0) FROM {s}.turn_steps "
    "WHERE turn_id = %(turn)s) + v.n, %(attempt)s, v.kind, v.status, v.started, v.finished, "
    "v.data, v.error, v.key "
    "FROM unnest(%(kinds)s::text[], %(statuses)s::text[], %(started)s::float8[], "
    "%(finished)s::float8[], %(data)s::jsonb[], %(errors)s::text[], %(keys)s::text[]) "
    "WITH ORDINALITY AS v(kind, status, started, finished, data, error, key, n) "
    "WHERE EXISTS (SELECT 1 FROM {s}.turn_requests WHERE id = %(turn)s "
    "AND lease_owner = %(run)s AND attempt = %(attempt)s AND status IN {active}) "
    "ORDER BY v.n RETURNING seq"
)
"""Several steps of one turn and attempt in one statement (its own transaction): the
fence check, the next sequence numbers (the statement's snapshot does not see its own
rows, so they take maximum + 1, + 2 … in order) and the inserts together. A key stored
before fails the statement, which changes nothing: the caller then goes step by step."""

RECORDED_STEP_SQL = (
    "SELECT {columns} FROM {s}.turn_steps WHERE idempotency_key = %(key)s "
    "AND EXISTS (SELECT 1 FROM {s}.turn_requests WHERE id = %(turn)s "
    "AND lease_owner = %(run)s AND attempt = %(attempt)s AND status IN {active})"
)
"""The step recorded before under a key, if the caller still holds the turn (``{columns}``:
the step columns)."""

COMPLETE_STEP_SQL = (
    "UPDATE {s}.turn_steps SET attempt = %(attempt)s, status = %(status)s, "
    "finished_at = %(finished)s, data = %(data)s, error = %(error)s "
    "WHERE idempotency_key = %(key)s AND turn_id = %(turn)s AND status = 'intent' "
    "AND EXISTS (SELECT 1 FROM {s}.turn_requests WHERE id = %(turn)s "
    "AND lease_owner = %(run)s AND attempt = %(attempt)s AND status IN {active}) RETURNING seq"
)
"""A tool call's result over its intent, fenced like ``RECORD_STEP_SQL``."""


def params(step: StepRecord, run_id: str) -> dict[str, Any]:
    """The named parameters of ``RECORD_STEP_SQL`` and its kin for ``step``."""
    return {
        "turn": step.turn_id,
        "attempt": step.attempt,
        "kind": step.kind,
        "status": step.status,
        "started": step.started_at,
        "finished": step.finished_at,
        "data": Jsonb(dict(step.data)),
        "error": step.error,
        "key": step.idempotency_key,
        "run": run_id,
    }


class TurnSteps:
    """The step methods of :class:`~toolang_store_postgres.store.PostgresStore` over its
    database (``record_step``, ``insert_steps``, ``complete_step``, ``steps``,
    ``find_step`` of :class:`~toolang_core.store.ExecutionStore`)."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def record(self, step: StepRecord, run_id: str) -> StepRecord | None:
        """Store ``step`` numbered (``None`` when this run does not hold the turn); a
        step whose idempotency key was recorded before is that stored step, replayed."""
        try:
            row = self._db.one(RECORD_STEP_SQL, params(step, run_id))
        except pg_errors.UniqueViolation:  # this idempotency key was recorded: replay it
            return self.find(step.idempotency_key or "")
        if row is None:
            return None
        return attrs.evolve(step, seq=row[0])

    def insert(self, steps: Sequence[StepRecord], run_id: str) -> list[StepRecord]:
        """``insert_steps`` of :class:`~toolang_core.store.backend.StoreBase`: ``steps``
        stored together, in one statement when they can be.

        :raises FencedOut: when this run does not hold the turn."""
        names = self._db.names
        insert_sql = names(RECORD_STEP_OR_SKIP_SQL)
        replay = names(RECORDED_STEP_SQL.replace("{columns}", STEP_COLUMNS))

        def insert(c: Conn, step: StepRecord) -> int | StepRecord | None:
            values = params(step, run_id)
            row = c.execute(insert_sql, values).fetchone()
            if row is not None:
                return int(row[0])
            if step.idempotency_key is None:
                return None  # fenced
            found = c.execute(replay, values).fetchone()  # recorded before: replay it
            return None if found is None else step_from_row(found)

        if len(steps) == 1:
            # One insert is its own transaction (a replay is a read after it): nothing
            # to roll back together, so no BEGIN/COMMIT round trips.
            return self._db.single(lambda c: insert_each(steps, lambda step: insert(c, step)))
        together = self._insert_together(steps, run_id)
        if together is not None:
            return together
        return self._db.tx(lambda c: insert_each(steps, lambda step: insert(c, step)))

    def _insert_together(self, steps: Sequence[StepRecord], run_id: str) -> list[StepRecord] | None:
        """The steps of one turn and attempt in one statement (one round trip); ``None``
        when they are not of one turn and attempt or a key was stored before (a replay:
        the statement changed nothing; they go one by one).

        :raises FencedOut: when this run does not hold the turn."""
        first = steps[0]
        if any(s.turn_id != first.turn_id or s.attempt != first.attempt for s in steps):
            return None
        values = {
            "turn": first.turn_id,
            "attempt": first.attempt,
            "run": run_id,
            "kinds": [s.kind for s in steps],
            "statuses": [s.status for s in steps],
            "started": [s.started_at for s in steps],
            "finished": [s.finished_at for s in steps],
            "data": [Jsonb(dict(s.data)) for s in steps],
            "errors": [s.error for s in steps],
            "keys": [s.idempotency_key for s in steps],
        }
        sql = self._db.names(RECORD_STEPS_SQL)
        try:
            rows = self._db.single(lambda c: c.execute(sql, values).fetchall())
        except pg_errors.UniqueViolation:
            return None
        return numbered_together(steps, rows)

    def complete(self, step: StepRecord, run_id: str) -> StepRecord | None:
        """Store an intent's result (``None`` when this run does not hold the turn)."""
        row = self._db.one(COMPLETE_STEP_SQL, params(step, run_id))
        return None if row is None else attrs.evolve(step, seq=row[0])

    def of_turn(self, turn_id: str) -> list[StepRecord]:
        rows = self._db.all(
            f"SELECT {STEP_COLUMNS} FROM {{s}}.turn_steps WHERE turn_id = %s ORDER BY seq",
            (turn_id,),
        )
        return [step_from_row(r) for r in rows]

    def find(self, idempotency_key: str) -> StepRecord | None:
        row = self._db.one(
            f"SELECT {STEP_COLUMNS} FROM {{s}}.turn_steps WHERE idempotency_key = %s",
            (idempotency_key,),
        )
        return None if row is None else step_from_row(row)
