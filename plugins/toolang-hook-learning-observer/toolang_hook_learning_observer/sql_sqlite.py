"""The statistics' SQL that only SQLite speaks (:mod:`.stats` picks it by dialect)."""

from __future__ import annotations

from toolang_hook_learning_observer.schema import TABLE


def counts(where: str) -> str:
    """Calls, failures and the last call per agent and tool."""
    return (
        f"SELECT agent, tool, COUNT(*), SUM(ok = 0), MAX(at) FROM {TABLE}{where} "
        "GROUP BY agent, tool ORDER BY agent, tool"
    )


def last_errors(where: str) -> str:
    """The latest failure per agent and tool: SQLite takes the bare columns from the
    row holding ``MAX(at)``."""
    return (
        f"SELECT agent, tool, error_type, error, MAX(at) FROM {TABLE}{where} GROUP BY agent, tool"
    )
