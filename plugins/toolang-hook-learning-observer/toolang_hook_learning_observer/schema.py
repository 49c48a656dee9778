"""The plugin's own tables, as :class:`~toolang_core.PluginMigrations` (append, never
edit): an SQLite file, or a PostgreSQL schema when the store is PostgreSQL. What the
two backends read differently is in :mod:`.sql_sqlite` and :mod:`.sql_postgres`."""

from __future__ import annotations

import functools
from typing import Final

from toolang_core import PluginDatabase, PluginMigrations
from toolang_hook_learning_observer.settings import NAME

TABLE: Final = "tool_outcomes"
COLUMNS: Final = (
    "at",
    "agent",
    "tool",
    "ok",
    "error_type",
    "error",
    "duration_ms",
    "turn_id",
    "thread_id",
    "call_id",
)

SUCCESS_COLUMNS: Final = tuple(c for c in COLUMNS if c not in ("error_type", "error"))
"""A success leaves its error columns NULL without binding them: sqlite3 binds a
``None`` through its adapter lookup, about 0.2 µs each — a tenth of the whole row."""
ROWS_PER_INSERT: Final = 50
"""Rows written by one INSERT statement: many rows to one statement cost a third less
per row than a statement per row (``executemany``), and 50 rows of 10 values stay
under the 999 variables the oldest SQLite allows."""


@functools.cache
def insert_rows(columns: tuple[str, ...], rows: int) -> str:
    """``INSERT INTO tool_outcomes (<columns>) VALUES (?, …), …`` for ``rows`` rows."""
    values = f"({', '.join('?' * len(columns))})"
    return f"INSERT INTO {TABLE} ({', '.join(columns)}) VALUES {', '.join([values] * rows)}"


MIGRATIONS: Final = PluginMigrations(NAME)


@MIGRATIONS()
def m001_tool_outcomes(db: PluginDatabase) -> None:
    real = db.dialect.float_type
    db.execute(
        f"""
        CREATE TABLE {TABLE} (
            id {db.dialect.id_column},
            at {real} NOT NULL,          -- unix time the outcome was observed
            agent TEXT NOT NULL,
            tool TEXT NOT NULL,
            ok INTEGER NOT NULL,         -- 1 succeeded, 0 failed
            error_type TEXT,             -- ToolResult.error_type of a failure
            error TEXT,                  -- short error text, secrets masked
            duration_ms {real} NOT NULL,
            turn_id TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            call_id TEXT NOT NULL
        )
        """
    )
    # The last calls of one agent's tool (notes, stats --agent).
    db.execute(f"CREATE INDEX {TABLE}_agent_tool_at ON {TABLE} (agent, tool, at)")
    # An agent's recent failures (notes): only failures are indexed.
    db.execute(f"CREATE INDEX {TABLE}_agent_failures ON {TABLE} (agent, at) WHERE ok = 0")
    # stats --since and pruning by age. (Every index costs each insert; `stats --tool`
    # without --agent, a command run by hand, scans instead.)
    db.execute(f"CREATE INDEX {TABLE}_at ON {TABLE} (at)")


@MIGRATIONS()
def m002_drop_at_index(db: PluginDatabase) -> None:
    # Each index costs every insert (about 1 µs of the 50 µs a whole tool-call chain may
    # take). Rows are appended in time order, so pruning walks the rowid instead, and
    # `stats --since` — run by hand — scans.
    db.execute(f"DROP INDEX IF EXISTS {TABLE}_at")
