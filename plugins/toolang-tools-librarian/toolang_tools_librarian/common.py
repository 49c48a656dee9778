"""What every librarian tool needs: its runtime, the caller's owner, the databases."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from toolang_core import StoreError, tool_owner, tool_runtime
from toolang_tools_librarian.settings import NAME, LibrarianSettings

if TYPE_CHECKING:
    from toolang_core import PluginDatabase, RuntimeView, ToolCallContext


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
    db: PluginDatabase, table: str, hash_column: str, row: dict[str, Any]
) -> tuple[int, bool]:
    """Insert ``row`` into ``table`` unless the same owner and agent already saved a row
    with its ``hash_column``; ``(the row's id, whether it was inserted now)``. Safe when
    two nodes save the same row at once (the unique key decides). ``table`` and
    ``hash_column`` are this plugin's own names, never input."""
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    inserted = db.execute(
        f"INSERT INTO {table} ({columns}) VALUES ({marks}) "
        f"ON CONFLICT (owner, agent, {hash_column}) DO NOTHING RETURNING id",
        list(row.values()),
    ).fetchone()
    if inserted is not None:
        return int(inserted[0]), True
    existing = db.execute(
        f"SELECT id FROM {table} WHERE owner = ? AND agent = ? AND {hash_column} = ?",
        [row["owner"], row["agent"], row[hash_column]],
    ).fetchone()
    return int(existing[0]), False


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


def own_database(runtime: RuntimeView) -> PluginDatabase:
    """This plugin's tables on the store's backend (``<home>/plugins/tools-librarian.db``,
    or its PostgreSQL schema), shared by the tools' worker threads."""
    from toolang_tools_librarian.schema import MIGRATIONS

    return runtime.plugin_database(NAME, MIGRATIONS)


def sql_for(db: PluginDatabase) -> ModuleType:
    """The module of SQL that differs for ``db``'s backend (:mod:`.sql_sqlite`,
    :mod:`.sql_postgres`)."""
    if db.dialect.name == "postgres":
        from toolang_tools_librarian import sql_postgres

        return sql_postgres
    from toolang_tools_librarian import sql_sqlite

    return sql_sqlite


def documented_table(runtime: RuntimeView, plugin: str) -> PluginDatabase | None:
    """Another plugin's database, read only, on the store's backend — for the tables
    its README documents (``None`` before that plugin has created it).

    Plugins never import each other: the table layout is their public contract.
    """
    return runtime.read_plugin_database(plugin)


def rows(db: PluginDatabase, table: str, sql: str, params: list[Any]) -> list[Any]:
    """``sql``'s rows; a table that cannot be read is a tool error naming it."""
    try:
        return db.execute(sql, params).fetchall()
    except StoreError:
        raise
    except Exception as exc:  # each backend has its own errors (sqlite3, psycopg)
        raise LibrarianError(f"cannot read the table {table!r} of {db.where}: {exc}") from None
