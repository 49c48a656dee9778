"""The plugin's own tables, as a ``sqlite_utils.Migrations`` set (append, never edit).

``memory_entries`` holds what was remembered, exactly as written. ``memory_fts`` is
the full-text index of each entry (its thread token and its
:func:`~toolang_memory_sqlite.text.index_text`), with the entry's id as its rowid;
``memory_agents`` gives each agent its range of ids and counts its entries;
``memory_uses`` holds how often and how lately recalls returned each entry (only of
entries recalled), and the view ``memory_items`` is the entries with their uses, as
they are read.
They live in the plugin's own file or in the execution store's file
(``database = "store"``); every name starts with ``memory_`` so they never collide
with the store's tables; :func:`size_bytes` measures them."""

from __future__ import annotations

import sqlite3
from typing import Final

from sqlite_utils import Database, Migrations

from toolang_memory_sqlite.settings import NAME

AGENTS: Final = "memory_agents"
ENTRIES: Final = "memory_entries"
FTS: Final = "memory_fts"
USES: Final = "memory_uses"
ITEMS: Final = "memory_items"
TOKENIZER: Final = "porter unicode61 remove_diacritics 2"
SEQ_BITS: Final = 40
"""Entry ids per scope: 2**40, from ``slot << SEQ_BITS`` on (:mod:`.search`)."""

MIGRATIONS: Final = Migrations(NAME)


@MIGRATIONS()
def m001_entries_and_index(db: Database) -> None:
    db.execute(
        f"""
        CREATE TABLE {ENTRIES} (
            id INTEGER PRIMARY KEY,    -- in the agent's range: slot << 40 onwards
            agent_id TEXT NOT NULL,
            thread_id TEXT,
            turn_id TEXT,
            origin TEXT NOT NULL,
            key TEXT,                  -- set: upserted and forgotten by (agent_id, key)
            kind TEXT NOT NULL,
            text TEXT NOT NULL,        -- exactly as remembered
            meta TEXT,                 -- JSON object, NULL when empty
            created_at REAL NOT NULL,  -- unix time of the first write (kept by upserts)
            updated_at REAL NOT NULL,  -- unix time of the last write (recency, listing)
            expires_at REAL            -- unix time; NULL never expires
        )
        """
    )
    # Upsert and forget by key; also makes two rows with one key impossible.
    db.execute(
        f"CREATE UNIQUE INDEX {ENTRIES}_agent_key ON {ENTRIES} (agent_id, key) "
        "WHERE key IS NOT NULL"
    )
    # Listing newest first, per agent and per agent and thread; forget by thread.
    db.execute(f"CREATE INDEX {ENTRIES}_agent_updated ON {ENTRIES} (agent_id, updated_at)")
    db.execute(
        f"CREATE INDEX {ENTRIES}_agent_thread_updated ON {ENTRIES} "
        "(agent_id, thread_id, updated_at)"
    )
    # Pruning expired rows, oldest first, without scanning the rest.
    db.execute(
        f"CREATE INDEX {ENTRIES}_expires ON {ENTRIES} (expires_at) WHERE expires_at IS NOT NULL"
    )
    # Each agent's entry ids form one range, so a rowid range scopes a full-text query
    # (search.allocate_ids); next_seq is the next free id in the range.
    db.execute(
        f"""
        CREATE TABLE {AGENTS} (
            agent_id TEXT PRIMARY KEY,
            slot INTEGER NOT NULL UNIQUE,
            next_seq INTEGER NOT NULL
        )
        """
    )
    # scope: the token of the entry's agent and thread (search.scope_text), so a recall
    # narrowed to a thread ranks that thread's matches only; body: text.index_text(text).
    db.execute(f"CREATE VIRTUAL TABLE {FTS} USING fts5(scope, body, tokenize = '{TOKENIZER}')")


@MIGRATIONS()
def m002_owners(db: Database) -> None:
    """Entries belong to an owner as well as an agent (``NULL``: the operator's).

    A key names one entry per agent *and owner*; ``memory_agents`` ranges are given per
    scope (:func:`toolang_memory_sqlite.search.scope_key`), so one owner's full-text
    query never reaches another's rows.
    """
    db.execute(f"ALTER TABLE {ENTRIES} ADD COLUMN owner TEXT")
    db.execute(f"DROP INDEX {ENTRIES}_agent_key")
    db.execute(
        f"CREATE UNIQUE INDEX {ENTRIES}_agent_owner_key ON {ENTRIES} "
        "(agent_id, coalesce(owner, ''), key) WHERE key IS NOT NULL"
    )


@MIGRATIONS()
def m003_uses(db: Database) -> None:
    """How often and how lately each entry was recalled (``uses``): ``use_count`` recalls
    have returned it, the latest at ``last_used_at`` (``NULL``: never)."""
    db.execute(f"ALTER TABLE {ENTRIES} ADD COLUMN use_count INTEGER NOT NULL DEFAULT 0")
    db.execute(f"ALTER TABLE {ENTRIES} ADD COLUMN last_used_at REAL")


@MIGRATIONS()
def m004_uses_of_their_own(db: Database) -> None:
    """Uses in a narrow table of their own, ``memory_uses``: committing a recall's uses
    rewrote each used entry whole (its text with it), about 250 pages of log for the
    256 entries of a bounded write-behind; their own table takes a few, in about half
    the time. An entry's uses go with it (a trigger); ``memory_items`` reads entries
    with their uses (0 and ``NULL`` when never recalled).

    The two columns of ``memory_entries`` stay, no longer written or read: a process of
    an earlier version still running on the file (it was opened before this migration)
    keeps working on them. A later release drops them. ``memory_items`` names its
    columns: a migration that adds a column to ``memory_entries`` recreates it."""
    db.execute(
        f"CREATE TABLE {USES} (id INTEGER PRIMARY KEY, use_count INTEGER NOT NULL, "
        "last_used_at REAL)"
    )
    db.execute(
        f"INSERT INTO {USES} (id, use_count, last_used_at) "
        f"SELECT id, use_count, last_used_at FROM {ENTRIES} WHERE use_count > 0"
    )
    db.execute(
        f"CREATE TRIGGER {ENTRIES}_uses_go AFTER DELETE ON {ENTRIES} "
        f"BEGIN DELETE FROM {USES} WHERE id = old.id; END"
    )
    columns = (
        "e.id, e.agent_id, e.thread_id, e.turn_id, e.origin, e.key, e.kind, e.text, e.meta, "
        "e.created_at, e.updated_at, e.expires_at, e.owner"
    )
    db.execute(
        f"CREATE VIEW {ITEMS} AS SELECT {columns}, coalesce(u.use_count, 0) AS use_count, "
        f"u.last_used_at AS last_used_at FROM {ENTRIES} AS e LEFT JOIN {USES} AS u ON u.id = e.id"
    )


@MIGRATIONS()
def m005_entry_counts(db: Database) -> None:
    """How many entries each scope holds, ``memory_agents.entries``: a cap on the entries
    (``max_entries``) reads one row at each write instead of counting the scope's
    entries (20 ms a write at 50,000 of them). Entries inserted are counted by the
    statement that allocates their ids (:func:`.search.allocate_ids`: no statement
    more; a trigger on each insert cost a turn's write 6 %); entries deleted by a
    trigger on ``memory_entries`` (an entry's scope is its id's slot, ``id >> SEQ_BITS``),
    whoever deletes them. Entries inserted by a process of an earlier version still
    running on the file are not counted: the cap keeps that many more.

    The indexes of each agent's entries (and each agent's thread's) by their last
    write take the owner in too, so a cap reads one scope's entries oldest first, and
    a listing or a forget one owner's, without passing over every other owner's
    entries of the agent."""
    db.execute(f"ALTER TABLE {AGENTS} ADD COLUMN entries INTEGER NOT NULL DEFAULT 0")
    db.execute(
        f"UPDATE {AGENTS} SET entries = (SELECT count(*) FROM {ENTRIES} "
        f"WHERE id >= {AGENTS}.slot << {SEQ_BITS} AND id < ({AGENTS}.slot + 1) << {SEQ_BITS})"
    )
    db.execute(
        f"CREATE TRIGGER {ENTRIES}_uncounted AFTER DELETE ON {ENTRIES} BEGIN "
        f"UPDATE {AGENTS} SET entries = entries - 1 WHERE slot = old.id >> {SEQ_BITS}; END"
    )
    db.execute(f"DROP INDEX {ENTRIES}_agent_updated")
    db.execute(f"DROP INDEX {ENTRIES}_agent_thread_updated")
    db.execute(f"CREATE INDEX {ENTRIES}_scope_updated ON {ENTRIES} (agent_id, owner, updated_at)")
    db.execute(
        f"CREATE INDEX {ENTRIES}_scope_thread_updated ON {ENTRIES} "
        "(agent_id, owner, thread_id, updated_at)"
    )


@MIGRATIONS()
def m006_uses_by_scope(db: Database) -> None:
    """``memory_uses`` indexed by scope (an entry's slot, ``id >> SEQ_BITS``) and last
    use: a cap reads a scope's recalled entries longest unused first, beside its
    never-recalled ones oldest first (:func:`.uses.cap`)."""
    db.execute(f"CREATE INDEX {USES}_scope_used ON {USES} (id >> {SEQ_BITS}, last_used_at)")


def size_bytes(conn: sqlite3.Connection, shared_with_store: bool) -> int | None:
    """Bytes of this plugin's tables: the whole file, or (sharing the store's file)
    the pages of the ``memory_`` tables and indexes, when SQLite can tell."""
    if not shared_with_store:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        return int(pages * page_size)
    names = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'memory\\_%' ESCAPE '\\' "
            "AND type IN ('table', 'index') AND rootpage > 0"
        )
    ]
    try:
        return sum(
            conn.execute(
                "SELECT pgsize FROM dbstat WHERE name = ? AND aggregate = 1", (name,)
            ).fetchone()[0]
            or 0
            for name in names
        )
    except sqlite3.OperationalError:  # SQLite built without the dbstat table
        return None
