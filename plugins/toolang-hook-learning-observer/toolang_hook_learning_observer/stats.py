"""``toolang learning stats``: calls, failures and latency per agent and tool."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

import attrs

from toolang_hook_learning_observer.notes import describe_error
from toolang_hook_learning_observer.schema import TABLE

if TYPE_CHECKING:
    from toolang_core import PluginDatabase


@attrs.frozen
class ToolStats:
    """How one agent's use of one tool went over the selected period."""

    agent: str
    tool: str
    calls: int
    failures: int
    failure_rate: float
    median_ms: float
    p95_ms: float
    last_call_at: float
    last_error: str | None = None
    last_error_at: float | None = None


@attrs.frozen
class StatsFilter:
    """Which outcomes count: one agent, one tool, since a unix time (``None``: any)."""

    agent: str | None = None
    tool: str | None = None
    since: float | None = None

    def where(self, *extra: str) -> tuple[str, list[Any]]:
        clauses: list[str] = list(extra)
        params: list[Any] = []
        for column, value in (("agent", self.agent), ("tool", self.tool)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if self.since is not None:
            clauses.append("at >= ?")
            params.append(self.since)
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def percentile(ordered: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of an ascending, non-empty sequence."""
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def tool_stats(db: PluginDatabase, selection: StatsFilter) -> list[ToolStats]:
    """One :class:`ToolStats` per (agent, tool) with outcomes in ``selection``, sorted."""
    sql = _sql_for(db)
    where, params = selection.where()
    counts = db.execute(sql.counts(where), params).fetchall()
    latencies = {
        key: [row[2] for row in rows]
        for key, rows in itertools.groupby(
            db.execute(
                f"SELECT agent, tool, duration_ms FROM {TABLE}{where} "
                "ORDER BY agent, tool, duration_ms",
                params,
            ),
            key=lambda row: (row[0], row[1]),
        )
    }
    failed_where, failed_params = selection.where("ok = 0")
    last_errors = {
        (agent, tool): (error_type, error, at)
        for agent, tool, error_type, error, at in db.execute(
            sql.last_errors(failed_where), failed_params
        )
    }
    out = []
    for agent, tool, calls, failures, last_call_at in counts:
        durations = latencies.get((agent, tool)) or [0.0]
        error_type, error, error_at = last_errors.get((agent, tool), (None, None, None))
        out.append(
            ToolStats(
                agent=agent,
                tool=tool,
                calls=calls,
                failures=failures,
                failure_rate=failures / calls,
                median_ms=statistics.median(durations),
                p95_ms=percentile(durations, 0.95),
                last_call_at=last_call_at,
                last_error=_error_text(error_type, error),
                last_error_at=error_at,
            )
        )
    return out


def _sql_for(db: PluginDatabase) -> ModuleType:
    if db.dialect.name == "postgres":
        from toolang_hook_learning_observer import sql_postgres

        return sql_postgres
    from toolang_hook_learning_observer import sql_sqlite

    return sql_sqlite


def _error_text(error_type: str | None, error: str | None) -> str | None:
    if error_type is None and error is None:
        return None
    return describe_error(error_type, error)
