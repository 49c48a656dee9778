"""The plugin's own table, as :class:`~toolang_core.PluginMigrations` (append, never
edit): an SQLite file, or a PostgreSQL schema when the store is PostgreSQL.

The upsert is the same SQL on both backends (``ON CONFLICT … DO UPDATE``, with the
table named where PostgreSQL would find ``times_seen`` ambiguous).
"""

from __future__ import annotations

from typing import Final

from toolang_core import PluginDatabase, PluginMigrations
from toolang_hook_knowledge_saver.settings import NAME

TABLE: Final = "knowledge"
COLUMNS: Final = (
    "agent",
    "tool",
    "params",
    "content",
    "content_chars",
    "content_hash",
    "thread_id",
    "turn_id",
    "call_id",
    "created_at",
    "last_seen_at",
)
# The same result again for the same agent: keep the first entry, count the sighting.
UPSERT: Final = (
    f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))}) "
    "ON CONFLICT (agent, content_hash) DO UPDATE SET "
    f"last_seen_at = excluded.last_seen_at, times_seen = {TABLE}.times_seen + 1"
)

MIGRATIONS: Final = PluginMigrations(NAME)


@MIGRATIONS()
def m001_knowledge(db: PluginDatabase) -> None:
    real = db.dialect.float_type
    db.execute(
        f"""
        CREATE TABLE {TABLE} (
            id {db.dialect.id_column},
            agent TEXT NOT NULL,
            tool TEXT NOT NULL,
            params TEXT NOT NULL,          -- short JSON of the call's parameters, secrets masked
            content TEXT NOT NULL,         -- the result text, secrets masked, cut at max_chars
            content_chars INTEGER NOT NULL,-- length of the whole text before cutting
            content_hash TEXT NOT NULL,    -- sha256 of the whole (masked) text
            thread_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            call_id TEXT NOT NULL,
            created_at {real} NOT NULL,
            last_seen_at {real} NOT NULL,
            times_seen INTEGER NOT NULL DEFAULT 1
        )
        """
    )
    db.execute(f"CREATE UNIQUE INDEX {TABLE}_agent_hash ON {TABLE} (agent, content_hash)")
    db.execute(f"CREATE INDEX {TABLE}_agent_id ON {TABLE} (agent, id)")
