"""Token usage summed in the SQLite store (:meth:`ExecutionStore.usage`).

The sums read the normalised ``tokens`` of completed model-call and compaction steps (JSON text,
through ``json_extract``), joined to their turn requests for the owner, thread and
budget. No index serves them: a turn asks only while an owner or budget limit applies,
the CLI and the API when a person looks.
"""

from __future__ import annotations

import sqlite3

from toolang_core.store.rows import usage_filter_sql
from toolang_core.store.usage import USAGE_STEPS_SQL, Usage, UsageFilter

_SUMS = (
    "count(*), sum(json_extract(s.data, '$.tokens.input')), "
    "sum(json_extract(s.data, '$.tokens.output')), "
    "sum(json_extract(s.data, '$.tokens.cached'))"
)
_FROM = "FROM turn_steps s JOIN turn_requests t ON t.id = s.turn_id WHERE " + USAGE_STEPS_SQL


def _where(where: UsageFilter) -> tuple[str, list[object]]:
    return usage_filter_sql(where, "?", "json_extract(t.meta, '$.budget.scope')")


def total(c: sqlite3.Connection, where: UsageFilter) -> Usage:
    clauses, params = _where(where)
    row = c.execute(f"SELECT {_SUMS} {_FROM}{clauses}", params).fetchone()
    return Usage.of_row(row)


def by_owner(c: sqlite3.Connection, where: UsageFilter) -> dict[str, Usage]:
    clauses, params = _where(where)
    rows = c.execute(
        f"SELECT coalesce(t.owner, ''), {_SUMS} {_FROM}{clauses} "
        "GROUP BY coalesce(t.owner, '') ORDER BY 1",
        params,
    ).fetchall()
    return {str(row[0]): Usage.of_row(row[1:]) for row in rows}
