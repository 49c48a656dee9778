"""What every librarian tool needs: its runtime, the caller's owner, the databases."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolang_core import tool_owner, tool_runtime
from toolang_tools_librarian.settings import NAME, LibrarianSettings

if TYPE_CHECKING:
    from sqlite_utils import Database

    from toolang_core import RuntimeView, ToolCallContext


class LibrarianError(ValueError):
    """A librarian tool cannot do what it was asked; the message says what to change."""


def runtime_of(context: ToolCallContext | None) -> RuntimeView:
    return tool_runtime(context, LibrarianError)


def settings_of(runtime: RuntimeView) -> LibrarianSettings:
    return runtime.settings_for(NAME, LibrarianSettings)


def owner_of(context: ToolCallContext | None) -> str:
    """Whose data the call may see: the owner of the turn it belongs to."""
    return tool_owner(context, LibrarianError)


def insert_once(
    db: Database, table: str, hash_column: str, row: dict[str, Any]
) -> tuple[int, bool]:
    """Insert ``row`` into ``table`` unless the same owner and agent already saved a row
    with its ``hash_column``; ``(the row's id, whether it was inserted now)``. Run it
    inside the caller's transaction (``table`` and ``hash_column`` are this plugin's
    own names, never input)."""
    existing = db.execute(
        f"SELECT id FROM {table} WHERE owner = ? AND agent = ? AND {hash_column} = ?",
        [row["owner"], row["agent"], row[hash_column]],
    ).fetchone()
    if existing is not None:
        return int(existing[0]), False
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    cursor = db.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", list(row.values()))
    return int(cursor.lastrowid or 0), True


class TurnOwners:
    """The owner of each turn id, looked up in the execution store once per call."""

    def __init__(self, runtime: RuntimeView) -> None:
        self.store = runtime.store
        self.known: dict[str, str | None] = {}

    def of(self, turn_id: str) -> str | None:
        if turn_id not in self.known:
            turn = self.store.get(turn_id) if self.store is not None else None
            self.known[turn_id] = None if turn is None else (turn.owner or turn.sender)
        return self.known[turn_id]


_LOCKS = threading.Lock()


def _lock(runtime: RuntimeView) -> threading.Lock:
    with _LOCKS:
        return runtime.plugin_state(f"{NAME}:lock", threading.Lock)


@contextmanager
def own_database(runtime: RuntimeView) -> Iterator[Database]:
    """This plugin's database (``<home>/plugins/tools-librarian.db``), one caller at a
    time: tools run in worker threads and share the runtime's one connection."""
    from toolang_tools_librarian.schema import MIGRATIONS

    with _lock(runtime):
        yield runtime.plugin_database(NAME, MIGRATIONS)


def documented_table(runtime: RuntimeView, plugin: str) -> sqlite3.Connection | None:
    """A read-only connection to another plugin's database, by the file and tables its
    README documents (``<home>/plugins/<plugin>.db``); ``None`` before it exists.

    Plugins never import each other: the table layout is their public contract.
    """
    path = Path(runtime.config.home) / "plugins" / f"{plugin}.db"
    if not path.exists():
        return None
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10.0)
    conn.execute("PRAGMA query_only = 1")
    return conn


def rows(conn: sqlite3.Connection, table: str, sql: str, params: list[Any]) -> list[Any]:
    """``sql``'s rows; a table that cannot be read is a tool error naming it."""
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.DatabaseError as exc:
        raise LibrarianError(f"cannot read the table {table!r}: {exc}") from None
