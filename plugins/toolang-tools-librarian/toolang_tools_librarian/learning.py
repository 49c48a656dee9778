"""``save_learning``, ``learning_stats`` and ``learning_failures``.

Outcomes come from the LearningObserver's documented table ``tool_outcomes`` in
its database on the store's backend (``<home>/plugins/hook-learning-observer.db`` or its
PostgreSQL schema; read only; it writes in batches, so the
last ``flush_seconds`` of outcomes may not be there yet). Only outcomes of the calling
turn's owner count. Lessons saved with ``save_learning`` live in this plugin's table
and are shown next to the tool they are about.
"""

from __future__ import annotations

import hashlib
from typing import Any

from toolang_core import ToolCallContext, is_own
from toolang_tools_librarian.common import (
    LibrarianError,
    TurnOwners,
    documented_table,
    insert_once,
    own_database,
    owner_of,
    rows,
    runtime_of,
    settings_of,
)
from toolang_tools_librarian.settings import LEARNING_OBSERVER

Outcome = tuple[float, str, str, int, str | None, str | None, float]
"""``(at, agent, tool, ok, error_type, error, duration_ms)``"""


def _outcomes(
    context: ToolCallContext, tool: str | None, agent: str | None, since_hours: float | None
) -> list[Outcome]:
    runtime = runtime_of(context)
    observed = documented_table(runtime, LEARNING_OBSERVER)
    if observed is None:
        return []
    clauses = ["id IN (SELECT id FROM tool_outcomes ORDER BY id DESC LIMIT ?)"]
    params: list[Any] = [settings_of(runtime).learning_scan]
    for column, value in (("tool", tool), ("agent", agent)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if since_hours is not None:
        clauses.append("at >= ?")
        params.append(runtime.clock() - since_hours * 3600)
    found = rows(
        observed,
        "tool_outcomes",
        "SELECT at, agent, tool, ok, error_type, error, duration_ms, turn_id "
        f"FROM tool_outcomes WHERE {' AND '.join(clauses)} ORDER BY at DESC, id DESC",
        params,
    )
    owner = owner_of(context)
    owners = TurnOwners(runtime)
    return [tuple(row[:7]) for row in found if is_own(owners.of(row[7]), owner)]


def _lessons(context: ToolCallContext, tool: str | None) -> dict[str | None, list[str]]:
    sql = "SELECT tool, lesson FROM learnings WHERE owner = ?"
    params: list[Any] = [owner_of(context)]
    if tool is not None:
        sql += " AND tool = ?"
        params.append(tool)
    found: dict[str | None, list[str]] = {}
    db = own_database(runtime_of(context))
    for about, lesson in db.execute(sql + " ORDER BY id DESC LIMIT 200", params):
        found.setdefault(about, []).append(lesson)
    return found


def _error(error_type: str | None, error: str | None) -> str:
    text, kind = (error or "").strip(), (error_type or "").strip()
    if not kind or text.startswith(kind):
        return text or kind or "error"
    return f"{kind}: {text}" if text else kind


def learning_stats(
    tool: str | None = None,
    agent: str | None = None,
    since_hours: float | None = None,
    context: ToolCallContext | None = None,
) -> list[dict[str, Any]]:
    """How each tool has been doing: calls, failures, failure rate, latency, last error.

    One entry per agent and tool, the worst failure rate first, with the lessons saved
    about the tool (save_learning).

    :param tool: only this tool
    :param agent: only this agent's calls
    :param since_hours: only calls of the last N hours
    """
    assert context is not None
    import statistics  # here: every run imports this module to register the tools

    groups: dict[tuple[str, str], list[Outcome]] = {}
    for outcome in _outcomes(context, tool, agent, since_hours):
        groups.setdefault((outcome[1], outcome[2]), []).append(outcome)
    lessons = _lessons(context, tool)
    out = []
    for (who, name), calls in groups.items():
        failed = [c for c in calls if not c[3]]
        durations = sorted(c[6] for c in calls)
        entry: dict[str, Any] = {
            "agent": who,
            "tool": name,
            "calls": len(calls),
            "failures": len(failed),
            "failure_rate": round(len(failed) / len(calls), 3),
            "median_ms": round(statistics.median(durations), 2),
            "last_call_at": calls[0][0],
            "last_error": _error(failed[0][4], failed[0][5]) if failed else None,
        }
        if lessons.get(name):
            entry["lessons"] = lessons[name][:5]
        out.append(entry)
    out.sort(key=lambda e: (-e["failure_rate"], -e["failures"], e["tool"], e["agent"]))
    return out


def learning_failures(
    tool: str | None = None,
    limit: int = 10,
    since_hours: float | None = None,
    context: ToolCallContext | None = None,
) -> list[dict[str, Any]]:
    """The newest failed tool calls and why they failed, newest first.

    :param tool: only failures of this tool
    :param limit: at most this many failures (1 to 100)
    :param since_hours: only failures of the last N hours
    """
    assert context is not None
    failed = [o for o in _outcomes(context, tool, None, since_hours) if not o[3]][:limit]
    lessons = _lessons(context, tool)
    return [
        {
            "at": at,
            "agent": who,
            "tool": name,
            "error": _error(error_type, error),
            "duration_ms": duration,
            **({"lessons": lessons[name][:3]} if lessons.get(name) else {}),
        }
        for at, who, name, _, error_type, error, duration in failed
    ]


def save_learning(
    lesson: str, tool: str | None = None, context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Save a lesson learned (e.g. why a tool fails and what works instead).

    :param lesson: what was learned, written so it stands on its own
    :param tool: the tool the lesson is about, if any
    """
    assert context is not None
    if not lesson.strip():
        raise LibrarianError("lesson is empty: write what was learned")
    owner = owner_of(context)
    runtime = runtime_of(context)
    if tool is not None and tool not in runtime.components.tools:
        raise LibrarianError(f"tool: no tool named {tool!r} is registered")
    digest = hashlib.sha256(f"{tool}\n{lesson.strip()}".encode()).hexdigest()
    db = own_database(runtime)
    with db.transaction():
        lesson_id, inserted = insert_once(
            db,
            "learnings",
            "lesson_hash",
            {
                "owner": owner,
                "agent": context.agent,
                "tool": tool,
                "lesson": lesson.strip(),
                "lesson_hash": digest,
                "thread_id": context.thread_id,
                "turn_id": context.turn_id,
                "created_at": runtime.clock(),
            },
        )
    if not inserted:
        return {"id": lesson_id, "saved": False, "reason": "already saved"}
    return {"id": lesson_id, "saved": True}
