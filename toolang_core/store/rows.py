"""Rows of the store's tables as the store's values, the same for every backend.

A backend selects the columns listed here, in this order, and turns the rows into
records with the functions below. A JSON column comes back as text from SQLite and
already decoded from PostgreSQL's ``jsonb``: :func:`from_json` takes either.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Final

import attrs

from toolang_core.store.submit_plan import SubmitPlan
from toolang_core.store.types import (
    Heartbeat,
    NewTurnRequest,
    Record,
    RunRecord,
    StepRecord,
    SubmitRules,
    TurnFilter,
    TurnRequest,
    TurnStatus,
    rank_for,
)
from toolang_core.store.usage import TASK_RUN_THREADS_SQL, TASK_THREAD_PREFIX, UsageFilter

TURN_COLUMNS: Final = (
    "id, seq, source, thread_id, thread_group, priority, rank, input, status, attempt, "
    "created_at, updated_at, sender, channel, agent, dedupe_key, not_before, parent, owner, "
    "timeout_seconds, meta, steer, started_at, finished_at, lease_owner, lease_expires, "
    "cancel_requested, output, outcome, error"
)
"""The columns of ``turn_requests`` a :class:`TurnRequest` is built from: its fields,
in order."""
STEP_COLUMNS: Final = (
    "turn_id, seq, attempt, kind, status, started_at, finished_at, data, error, idempotency_key"
)
RUN_COLUMNS: Final = "id, host, pid, version, started_at, heartbeat_at, status, stopped_at, plugins"
RECORD_COLUMNS: Final = "kind, key, revision, data, updated_at"

_FIELDS = [field.name for field in attrs.fields(TurnRequest)]
if TURN_COLUMNS.split(", ") != _FIELDS:  # pragma: no cover - a change to either one
    raise ImportError(f"TURN_COLUMNS must list TurnRequest's fields in order: {_FIELDS}")

_STATUS = {s.value: s for s in TurnStatus}


def from_json(value: Any) -> Any:
    """A JSON column's value: decoded from text, or as the driver decoded it."""
    if type(value) is not str:
        return value
    return {} if value == "{}" else json.loads(value)  # most requests carry no meta


def turn_from_row(row: Sequence[Any]) -> TurnRequest:
    """Build a :class:`TurnRequest` from a row selected with ``TURN_COLUMNS``.

    The columns are the class's fields in order, so the row is passed positionally
    after converting five of them: 30 keyword arguments cost a third more.
    """
    values = list(row)
    values[8] = _STATUS[values[8]]  # status
    values[16] = values[16] or None  # not_before: 0 in the row means none
    values[20] = from_json(values[20])  # meta
    values[21] = bool(values[21])  # steer
    values[26] = bool(values[26])  # cancel_requested
    return TurnRequest(*values)


def step_from_row(row: Sequence[Any]) -> StepRecord:
    """Build a :class:`StepRecord` from a row selected with ``STEP_COLUMNS``."""
    turn_id, seq, attempt, kind, status, started, finished, data, error, key = row
    return StepRecord(
        turn_id, seq, attempt, kind, status, started, finished, from_json(data), error, key
    )


def run_from_row(row: Sequence[Any]) -> RunRecord:
    """Build a :class:`RunRecord` from a row selected with ``RUN_COLUMNS``."""
    run_id, host, pid, version, started, heartbeat, status, stopped, plugins = row
    return RunRecord(
        run_id, host, pid, version, started, heartbeat, status, stopped, tuple(from_json(plugins))
    )


def new_run_values(run: RunRecord) -> tuple[object, ...]:
    """The values of a new run's row for ``id, host, pid, version, started_at,
    heartbeat_at, status`` (its plugins follow, encoded as the backend stores JSON)."""
    return (run.id, run.host, run.pid, run.version, run.started_at, run.heartbeat_at, run.status)


def record_from_row(row: Sequence[Any]) -> Record:
    """Build a :class:`Record` from a row selected with ``RECORD_COLUMNS``."""
    kind, key, revision, data, updated_at = row
    return Record(kind, key, revision, from_json(data), updated_at)


def heartbeat_from_rows(rows: Iterable[Sequence[Any]]) -> Heartbeat:
    """The :class:`Heartbeat` of a run from the ``(id, cancel_requested)`` rows of the
    turns whose leases it renewed."""
    owned = list(rows)
    return Heartbeat(
        owned=frozenset(r[0] for r in owned),
        cancel_requested=frozenset(r[0] for r in owned if r[1]),
    )


def turn_filter_sql(where: TurnFilter, mark: str) -> tuple[str, list[Any]]:
    """The ``WHERE … ORDER BY … LIMIT`` of a turn listing, with ``mark`` as the
    placeholder (``?`` or ``%s``), and its parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    for column in ("thread_id", "source", "parent", "owner"):
        value = getattr(where, column)
        if value is not None:
            clauses.append(f"{column} = {mark}")
            params.append(value)
    if where.status:
        clauses.append(f"status IN ({', '.join([mark] * len(where.status))})")
        params.extend(s.value for s in where.status)
    if where.before_seq is not None:
        clauses.append(f"seq < {mark}")
        params.append(where.before_seq)
    condition = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    return f"{condition} ORDER BY seq DESC LIMIT {mark}", [*params, where.limit]


def usage_filter_sql(
    where: UsageFilter, mark: str, budget_scope: str, turns: str = "turn_requests"
) -> tuple[str, list[Any]]:
    """The ``AND …`` clauses of a usage sum (:meth:`ExecutionStore.usage`) over model-call
    steps ``s`` joined to their turn requests ``t``, with ``mark`` as the placeholder,
    ``budget_scope`` as the backend's expression for ``t.meta``'s budget scope and
    ``turns`` as its turn requests table (for ``task_run``'s threads), and their
    parameters."""
    sql: list[str] = []
    params: list[Any] = []
    for clause, value in (
        ("s.turn_id = {}", where.turn_id),
        ("t.thread_id = {}", where.thread_id),
        ("t.owner = {}", where.owner),
        (budget_scope + " = {}", where.budget),
        ("s.finished_at >= {}", where.since),
        ("s.turn_id <> {}", where.exclude_turn),
    ):
        if value is not None:
            sql.append(" AND " + clause.format(mark))
            params.append(value)
    if where.task_run is not None:
        threads = TASK_RUN_THREADS_SQL.format(mark=mark, turns=turns)
        sql.append(f" AND t.thread_id IN ({threads})")
        params.append(TASK_THREAD_PREFIX + where.task_run)
    return "".join(sql), params


NewTurnValues = tuple[tuple[object, ...], tuple[object, ...]]
"""The values of a new queued request (meta and steer apart): those of
``id, source, thread_id, thread_group, priority, rank, input, created_at, updated_at,
sender``, then those of :data:`OPTIONAL_COLUMNS` (often all ``None``)."""
OPTIONAL_COLUMNS: Final = (
    "channel",
    "agent",
    "dedupe_key",
    "not_before",
    "parent",
    "owner",
    "timeout_seconds",
)


def new_turn_values(
    request: NewTurnRequest,
    rules: SubmitRules,
    turn_id: str,
    now: float,
    plan: SubmitPlan | None = None,
) -> NewTurnValues:
    """The columns of ``request`` as a new queued row (see :data:`NewTurnValues`), with
    its group's priority and aging and the dedupe key ``plan`` chose."""
    eligible = max(now, request.not_before or 0.0)
    fixed = (
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
    )
    optional = (
        request.channel,
        request.agent,
        (plan and plan.dedupe_key) or request.dedupe_key,
        request.not_before,
        request.parent,
        request.owner,
        request.timeout_seconds,
    )
    return fixed, optional
