"""The statistics' SQL that only PostgreSQL speaks (:mod:`.stats` picks it by dialect)."""

from __future__ import annotations

from toolang_hook_learning_observer.schema import TABLE


def counts(where: str) -> str:
    """Calls, failures and the last call per agent and tool."""
    return (
        f"SELECT agent, tool, COUNT(*), COUNT(*) FILTER (WHERE ok = 0), MAX(at) FROM {TABLE}"
        f"{where} GROUP BY agent, tool ORDER BY agent, tool"
    )


def last_errors(where: str) -> str:
    """The latest failure per agent and tool (``DISTINCT ON`` keeps the first row of
    each, newest first)."""
    return (
        f"SELECT DISTINCT ON (agent, tool) agent, tool, error_type, error, at FROM {TABLE}"
        f"{where} ORDER BY agent, tool, at DESC, id DESC"
    )
