"""The SQLite store's schema snapshot, ``schema.sql`` beside this module.

    python -m toolang_core.store.sqlite.snapshot          # check it
    python -m toolang_core.store.sqlite.snapshot --write  # refresh it

The schema is what the store's migrations build on an empty database: each table,
index and trigger as SQLite keeps it (``sqlite_master``), by kind and name.
"""

from __future__ import annotations

import sqlite3
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from sqlite_utils import Database

from toolang_core.store.snapshot import snapshot_main
from toolang_core.store.sqlite.schema import MIGRATION_SET, known_names, migrations

SNAPSHOT: Final = Path(__file__).with_name("schema.sql")
REFRESH: Final = "python -m toolang_core.store.sqlite.snapshot --write"
_KINDS = ("table", "index", "trigger", "view")


def render_schema() -> str:
    """The schema the store's migrations build, as SQL text."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        migrations.apply(Database(conn))
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"
        ).fetchall()
    finally:
        conn.close()
    rows.sort(key=lambda row: (_KINDS.index(row[0]), row[1]))
    head = [
        f"-- The SQLite execution store's schema (migration set {MIGRATION_SET!r}), as its",
        "-- migrations build it. Generated: refresh with",
        f"--   {REFRESH}",
        f"-- Migrations: {', '.join(known_names())}",
    ]
    return "\n".join(head) + "\n\n" + "".join(f"{statement(sql)};\n\n" for _, _, sql in rows)


def statement(sql: str) -> str:
    """``sql`` with the indentation of its migration's source taken off."""
    first, _, rest = sql.strip().partition("\n")
    return f"{first}\n{textwrap.dedent(rest)}" if rest else first


def main(argv: Sequence[str] | None = None) -> int:
    return snapshot_main(argv, render=render_schema, path=SNAPSHOT, refresh=REFRESH)


if __name__ == "__main__":
    raise SystemExit(main())
