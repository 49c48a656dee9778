"""Token usage summed in PostgreSQL (``ExecutionStore.usage``): the normalised
``tokens`` of completed model-call and compaction steps (``jsonb``), joined to their
turn requests for the owner, thread and budget — the same sums as the SQLite store's."""

from __future__ import annotations

from typing import Any

from toolang_core.store import Usage, UsageFilter
from toolang_core.store.backend import USAGE_STEPS_SQL, usage_filter_sql

_SUMS = (
    "count(*), sum((s.data->'tokens'->>'input')::bigint), "
    "sum((s.data->'tokens'->>'output')::bigint), "
    "sum((s.data->'tokens'->>'cached')::bigint)"
)
_FROM = (
    "FROM {s}.turn_steps s JOIN {s}.turn_requests t ON t.id = s.turn_id WHERE " + USAGE_STEPS_SQL
)


def where_sql(where: UsageFilter) -> tuple[str, list[Any]]:
    """The filter's clauses (after ``WHERE …``) and their parameters."""
    return usage_filter_sql(where, "%s", "t.meta->'budget'->>'scope'", "{s}.turn_requests")


def total_sql(where: UsageFilter) -> tuple[str, list[Any]]:
    clauses, params = where_sql(where)
    return f"SELECT {_SUMS} {_FROM}{clauses}", params


def by_owner_sql(where: UsageFilter) -> tuple[str, list[Any]]:
    clauses, params = where_sql(where)
    sql = (
        f"SELECT coalesce(t.owner, ''), {_SUMS} {_FROM}{clauses} "
        "GROUP BY coalesce(t.owner, '') ORDER BY 1"
    )
    return sql, params


def total(row: Any) -> Usage:
    return Usage.of_row(row)


def by_owner(rows: list[Any]) -> dict[str, Usage]:
    return {str(row[0]): Usage.of_row(row[1:]) for row in rows}
