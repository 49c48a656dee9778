"""The call log's table, as :class:`~toolang_core.PluginMigrations` (append, never
edit): on the store's backend, so every node of a runtime sharing a PostgreSQL store
reads the same log (schema ``<store schema>__agents_remote``); an SQLite file
``<home>/plugins/agents-remote.db`` otherwise.

Its SQL is the same on both backends (``ON CONFLICT (key) DO NOTHING``, ``LIMIT``):
there is no per-backend module.
"""

from __future__ import annotations

from typing import Final

from toolang_core import PluginDatabase, PluginMigrations

NAME: Final = "agents-remote"
MIGRATIONS: Final = PluginMigrations(NAME)


@MIGRATIONS()
def m001_calls(db: PluginDatabase) -> None:
    real = db.dialect.float_type
    db.execute(
        "CREATE TABLE calls (key TEXT PRIMARY KEY, url TEXT NOT NULL, "
        "message_id TEXT NOT NULL, task_id TEXT, state TEXT NOT NULL, error TEXT, "
        f"started {real} NOT NULL, finished {real})"
    )
    db.execute("CREATE INDEX calls_by_url ON calls (url, started)")
