"""The plugin's own table, as a ``sqlite_utils.Migrations`` set (append, never edit)."""

from __future__ import annotations

from typing import Final

from sqlite_utils import Database, Migrations

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
    "last_seen_at = excluded.last_seen_at, times_seen = times_seen + 1"
)

MIGRATIONS: Final = Migrations(NAME)


@MIGRATIONS()
def m001_knowledge(db: Database) -> None:
    db.execute(
        f"""
        CREATE TABLE {TABLE} (
            id INTEGER PRIMARY KEY,
            agent TEXT NOT NULL,
            tool TEXT NOT NULL,
            params TEXT NOT NULL,          -- short JSON of the call's parameters, secrets masked
            content TEXT NOT NULL,         -- the result text, secrets masked, cut at max_chars
            content_chars INTEGER NOT NULL,-- length of the whole text before cutting
            content_hash TEXT NOT NULL,    -- sha256 of the whole (masked) text
            thread_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            call_id TEXT NOT NULL,
            created_at REAL NOT NULL,
            last_seen_at REAL NOT NULL,
            times_seen INTEGER NOT NULL DEFAULT 1
        )
        """
    )
    db.execute(f"CREATE UNIQUE INDEX {TABLE}_agent_hash ON {TABLE} (agent, content_hash)")
    db.execute(f"CREATE INDEX {TABLE}_agent_id ON {TABLE} (agent, id)")
