"""The plugin's own tables, as a ``sqlite_utils.Migrations`` set (append, never edit).

Every row carries its ``owner``: one owner never reads or changes another's ontology.
A relation is a fact whose object is an entity (``object_kind = 'entity'``), so facts
and relations share one table, one conflict rule and one history.
"""

from __future__ import annotations

from typing import Final

from sqlite_utils import Database, Migrations

from toolang_tools_ontologist.settings import NAME

MIGRATIONS: Final = Migrations(NAME)


@MIGRATIONS()
def m001_tables(db: Database) -> None:
    # A type: its attributes as a JSON Schema object, its relations as
    # {predicate: {"target": type, "many": bool}}.
    db.execute(
        """
        CREATE TABLE types (
            owner TEXT NOT NULL,
            name TEXT NOT NULL,
            description TEXT NOT NULL,
            attributes TEXT NOT NULL,
            relations TEXT NOT NULL,
            defined_at REAL NOT NULL,
            PRIMARY KEY (owner, name)
        )
        """
    )
    db.execute(
        """
        CREATE TABLE entities (
            owner TEXT NOT NULL,
            key TEXT NOT NULL,
            type TEXT NOT NULL,
            label TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (owner, key)
        )
        """
    )
    # object: an entity's key (object_kind 'entity') or a value's canonical JSON
    # ('value'). single: the predicate holds one object per subject (a conflict when
    # two active facts disagree). status: 'active' or 'superseded' (by resolution_id).
    db.execute(
        """
        CREATE TABLE facts (
            id INTEGER PRIMARY KEY,
            owner TEXT NOT NULL,
            subject TEXT NOT NULL,
            predicate TEXT NOT NULL,
            object TEXT NOT NULL,
            object_kind TEXT NOT NULL,
            single INTEGER NOT NULL,
            source TEXT NOT NULL,
            confidence REAL NOT NULL,
            observed_at REAL NOT NULL,
            recorded_at REAL NOT NULL,
            status TEXT NOT NULL DEFAULT 'active',
            resolution_id INTEGER
        )
        """
    )
    db.execute("CREATE INDEX facts_subject ON facts (owner, subject, predicate, object)")
    db.execute("CREATE INDEX facts_predicate ON facts (owner, predicate, object)")
    db.execute("CREATE INDEX facts_object ON facts (owner, object)")
    db.execute(
        "CREATE INDEX facts_single ON facts (owner, subject, predicate, object) "
        "WHERE single = 1 AND status = 'active'"
    )
    db.execute(
        """
        CREATE TABLE resolutions (
            id INTEGER PRIMARY KEY,
            owner TEXT NOT NULL,
            subject TEXT NOT NULL,
            predicate TEXT NOT NULL,
            kept INTEGER NOT NULL,
            superseded TEXT NOT NULL,
            strategy TEXT NOT NULL,
            reason TEXT NOT NULL,
            resolved_at REAL NOT NULL
        )
        """
    )
    # The answer of each writing call, by its idempotency key: the same call made
    # again (a turn resumed after a crash) gets the same answer and changes nothing.
    db.execute(
        """
        CREATE TABLE calls (
            owner TEXT NOT NULL,
            call_key TEXT NOT NULL,
            tool TEXT NOT NULL,
            answer TEXT NOT NULL,
            PRIMARY KEY (owner, call_key)
        )
        """
    )
