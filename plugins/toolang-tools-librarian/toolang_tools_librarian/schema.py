"""The plugin's own tables, as a ``sqlite_utils.Migrations`` set (append, never edit)."""

from __future__ import annotations

from typing import Final

from sqlite_utils import Database, Migrations

from toolang_tools_librarian.settings import NAME

MIGRATIONS: Final = Migrations(NAME)


@MIGRATIONS()
def m001_tables(db: Database) -> None:
    # Knowledge saved on purpose (save_knowledge). One text once per owner and agent;
    # call_id makes a replayed call a no-op.
    db.execute(
        """
        CREATE TABLE saved_knowledge (
            id INTEGER PRIMARY KEY,
            owner TEXT NOT NULL,
            agent TEXT NOT NULL,
            topic TEXT NOT NULL,
            content TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            call_id TEXT NOT NULL,
            created_at REAL NOT NULL,
            UNIQUE (owner, agent, content_hash)
        )
        """
    )
    db.execute("CREATE VIRTUAL TABLE saved_knowledge_fts USING fts5(topic, content)")
    db.execute(
        """
        CREATE TABLE learnings (
            id INTEGER PRIMARY KEY,
            owner TEXT NOT NULL,
            agent TEXT NOT NULL,
            tool TEXT,
            lesson TEXT NOT NULL,
            lesson_hash TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            created_at REAL NOT NULL,
            UNIQUE (owner, agent, lesson_hash)
        )
        """
    )
    # RAG: one row per indexed file, one FTS row per chunk (rowid = chunk id).
    db.execute(
        """
        CREATE TABLE rag_files (
            id INTEGER PRIMARY KEY,
            owner TEXT NOT NULL,
            index_name TEXT NOT NULL,
            path TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime REAL NOT NULL,
            chunks INTEGER NOT NULL,
            UNIQUE (owner, index_name, path)
        )
        """
    )
    db.execute(
        """
        CREATE TABLE rag_chunks (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES rag_files (id) ON DELETE CASCADE,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            text TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX rag_chunks_file ON rag_chunks (file_id)")
    db.execute("CREATE VIRTUAL TABLE rag_chunks_fts USING fts5(text)")
