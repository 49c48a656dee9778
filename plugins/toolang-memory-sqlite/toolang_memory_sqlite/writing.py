"""Writing entries, checked before anything is stored (:func:`toolang_core.memory.kit.checked`):
inserted (the batches of concurrent turns together, in a few statements), upserted by
key, and expired entries pruned. Each function works in the caller's transaction on its
connection."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any, Final

from toolang_core import redact_text
from toolang_core.memory import MemoryEntry, MemoryWriteBatch, MemoryWriteResult
from toolang_core.memory.kit import Guard, Row
from toolang_memory_sqlite import search, text
from toolang_memory_sqlite.errors import SQLiteMemoryError
from toolang_memory_sqlite.schema import AGENTS, ENTRIES, FTS
from toolang_memory_sqlite.settings import PROVIDER

INSERT_ENTRY: Final = (
    f"INSERT INTO {ENTRIES} (thread_id, turn_id, origin, kind, text, meta, id, agent_id, key, "
    "created_at, updated_at, expires_at, owner) VALUES"
)
INSERT_INDEXED: Final = f"INSERT INTO {FTS} (rowid, scope, body) VALUES"
BY_KEY: Final = "agent_id = ? AND coalesce(owner, '') = coalesce(?, '') AND owner IS ?"
"""An agent's and owner's keyed entries (parameters: agent, owner, owner): spelled as
the unique key index has it (``schema.m002_owners``), so a lookup by key searches that
index on all its columns — with ``owner IS ?`` alone it reads every keyed entry of the
agent (1.5 ms at 20,000 of them, against 5 us)."""
ROWS_PER_STATEMENT: Final = 500
"""Rows of one multi-row INSERT (13 columns: well within SQLite's 32,766 variables)."""

Batches = Sequence[tuple[MemoryWriteBatch, list[Row]]]
"""Batches to write together, each with its checked rows."""


def insert_group(conn: sqlite3.Connection, group: Batches, now: float, guard: Guard) -> bool:
    """Insert every entry of ``group`` with one statement per table (and one per
    agent for the ids) — each statement a hand-over of the GIL and back, contended
    by the event loop's thread. ``False``, having written nothing, when an entry has
    a key (an upsert) or a statement fails: then each batch is written alone.

    A group of one batch has no savepoint (two statements fewer for a lone write): its
    failure is raised, and the caller's transaction rolled back is all it undoes."""
    if any(entry.key is not None for _, rows in group for entry, _ in rows):
        return False
    alone = len(group) == 1
    if not alone:
        conn.execute("SAVEPOINT grouped")
    try:
        with guard("remember"):
            counts: dict[str, int] = {}
            for batch, rows in group:
                scope = search.scope_key(batch.agent_id, batch.owner)
                counts[scope] = counts.get(scope, 0) + len(rows)
            ids = {
                scope: iter(search.allocate_ids(conn, scope, count))
                for scope, count in counts.items()
            }
            entries: list[tuple[Any, ...]] = []
            indexed: list[tuple[Any, ...]] = []
            for batch, rows in group:
                scope = search.scope_key(batch.agent_id, batch.owner)
                tokens = search.scope_text(scope, batch.thread_id)
                for entry, meta in rows:
                    row_id = next(ids[scope])
                    body = masked(entry.text)
                    expires = None if entry.ttl_seconds is None else now + entry.ttl_seconds
                    entries.append(
                        (
                            *(batch.thread_id, batch.turn_id, batch.origin, entry.kind),
                            *(body, meta, row_id, batch.agent_id, None, now, now, expires),
                            batch.owner,
                        )
                    )
                    indexed.append((row_id, tokens, text.index_text(body)))
            insert_rows(conn, INSERT_ENTRY, entries)
            insert_rows(conn, INSERT_INDEXED, indexed)
    except (ValueError, SQLiteMemoryError):
        if alone:
            raise
        conn.execute("ROLLBACK TO grouped")
        conn.execute("RELEASE grouped")
        return False
    if not alone:
        conn.execute("RELEASE grouped")
    return True


def each_batch(
    conn: sqlite3.Connection, group: Batches, now: float, pruned: int, guard: Guard
) -> list[MemoryWriteResult | Exception]:
    """Write the batches of ``group`` one by one, each in a savepoint: one that fails
    (its exception in its place) leaves the others. ``pruned`` is counted in the first
    result written."""
    outcomes: list[MemoryWriteResult | Exception] = []
    for batch, rows in group:
        conn.execute("SAVEPOINT batch")
        try:
            with guard("remember"):
                write_batch(conn, batch, rows, now)
        except (ValueError, SQLiteMemoryError) as exc:
            conn.execute("ROLLBACK TO batch")
            conn.execute("RELEASE batch")
            outcomes.append(exc)
            continue
        conn.execute("RELEASE batch")
        outcomes.append(written(rows, pruned))
        pruned = 0  # counted once, for the first batch of the group
    return outcomes


def write_batch(
    conn: sqlite3.Connection, batch: MemoryWriteBatch, rows: list[Row], now: float
) -> None:
    """Write the rows of ``batch``: each inserted, or updated when its key exists; then
    their texts (re)indexed. The ids allocated for the rows that were updates are not
    used: the scope's count (:func:`.search.allocate_ids`) takes them back."""
    scope = search.scope_key(batch.agent_id, batch.owner)
    ids = iter(search.allocate_ids(conn, scope, len(rows)))
    written = [upsert(conn, batch, entry, meta, now=now, new_ids=ids) for entry, meta in rows]
    updates = sum(updated for _, _, updated in written)
    if updates:
        conn.execute(
            f"UPDATE {AGENTS} SET entries = entries - ? WHERE agent_id = ?", (updates, scope)
        )
    tokens = search.scope_text(scope, batch.thread_id)
    for row_id, body, updated in written:
        if updated:
            conn.execute(f"DELETE FROM {FTS} WHERE rowid = ?", (row_id,))
        conn.execute(f"{INSERT_INDEXED} {marks(3)}", (row_id, tokens, text.index_text(body)))


def upsert(
    conn: sqlite3.Connection,
    batch: MemoryWriteBatch,
    entry: MemoryEntry,
    meta: str | None,
    *,
    now: float,
    new_ids: Iterator[int],
) -> tuple[int, str, bool]:
    """Insert ``entry`` under the next of ``new_ids``, or update the agent's entry with
    its key; return its id, its text as stored, and whether it was an update (its text
    is indexed already: the caller indexes it again)."""
    expires = None if entry.ttl_seconds is None else now + entry.ttl_seconds
    body = masked(entry.text)
    values = (batch.thread_id, batch.turn_id, batch.origin, entry.kind, body, meta)
    existing = None
    if entry.key is not None:
        existing = conn.execute(
            f"SELECT id FROM {ENTRIES} WHERE {BY_KEY} AND key = ?",
            (batch.agent_id, batch.owner, batch.owner, entry.key),
        ).fetchone()
    if existing is None:
        row_id = next(new_ids)
        conn.execute(
            f"{INSERT_ENTRY} {marks(13)}",
            (*values, row_id, batch.agent_id, entry.key, now, now, expires, batch.owner),
        )
        return row_id, body, False
    conn.execute(
        f"UPDATE {ENTRIES} SET thread_id = ?, turn_id = ?, origin = ?, kind = ?, "
        "text = ?, meta = ?, updated_at = ?, expires_at = ? WHERE id = ?",
        (*values, now, expires, existing[0]),
    )
    return existing[0], body, True


def prune(conn: sqlite3.Connection, now: float, limit: int) -> int:
    """Delete up to ``limit`` entries expired at ``now``; return how many."""
    ids = [
        row[0]
        for row in conn.execute(
            f"SELECT id FROM {ENTRIES} WHERE expires_at IS NOT NULL AND expires_at <= ? "
            "ORDER BY expires_at LIMIT ?",
            (now, limit),
        )
    ]
    if ids:
        placeholders = ", ".join("?" * len(ids))
        conn.execute(f"DELETE FROM {FTS} WHERE rowid IN ({placeholders})", ids)
        conn.execute(f"DELETE FROM {ENTRIES} WHERE id IN ({placeholders})", ids)
    return len(ids)


def masked(body: str) -> str:
    """``body`` as the runtime's redaction policy masks it: no raw secret at rest, in the
    table or in the full-text index (the runtime's memory service masks first — then
    this finds the text known clean — and a plugin used on its own is held to it too)."""
    return redact_text(body)


def marks(columns: int) -> str:
    """The placeholders of one row of ``columns`` values: ``(?, ?, …)``."""
    return "(" + ", ".join("?" * columns) + ")"


def insert_rows(conn: sqlite3.Connection, insert: str, rows: list[tuple[Any, ...]]) -> None:
    """``rows`` inserted with ``insert`` (``INSERT INTO … VALUES``), many per statement."""
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        chunk = rows[start : start + ROWS_PER_STATEMENT]
        placeholders = ", ".join([marks(len(chunk[0]))] * len(chunk))
        conn.execute(f"{insert} {placeholders}", [value for row in chunk for value in row])


def written(rows: Sequence[Row], pruned: int) -> MemoryWriteResult:
    """The result of a batch of ``rows`` written (``pruned`` expired entries deleted)."""
    return MemoryWriteResult(
        written=len(rows), provider=PROVIDER, diagnostics={"pruned_expired": pruned}
    )
