"""The plugin's own tables, as :class:`~toolang_core.PluginMigrations` (append, never
edit): an SQLite file ``<home>/plugins/tools-librarian.db``, or the PostgreSQL schema
``<store schema>__tools_librarian`` when the store is PostgreSQL (every node shares it).

Full-text search differs: SQLite keeps FTS5 tables beside ``saved_knowledge`` and
``rag_chunks`` (rowid = the row's id, filled by the tools); PostgreSQL keeps a generated
``search`` column (``tsvector``, text search configuration ``simple``: words as they
are, like FTS5's default tokenizer) with a GIN index. An SQLite file made before the
plugin moved to ``PluginMigrations`` has the same ledger and opens unchanged.
"""

from __future__ import annotations

from typing import Final

from toolang_core import PluginDatabase, PluginMigrations
from toolang_tools_librarian.settings import NAME

MIGRATIONS: Final = PluginMigrations(NAME)


@MIGRATIONS()
def m001_tables(db: PluginDatabase) -> None:
    key, real = db.dialect.id_column, db.dialect.float_type
    postgres = db.dialect.name == "postgres"
    reference = "BIGINT" if postgres else "INTEGER"
    # Knowledge saved on purpose (save_knowledge). One text once per owner and agent;
    # call_id makes a replayed call a no-op.
    db.execute(
        f"""
        CREATE TABLE saved_knowledge (
            id {key},
            owner TEXT NOT NULL,
            agent TEXT NOT NULL,
            topic TEXT NOT NULL,
            content TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            call_id TEXT NOT NULL,
            created_at {real} NOT NULL,
            UNIQUE (owner, agent, content_hash)
        )
        """
    )
    if postgres:
        db.execute(
            "ALTER TABLE saved_knowledge ADD COLUMN search tsvector GENERATED ALWAYS AS "
            "(to_tsvector('simple', topic || ' ' || content)) STORED"
        )
        db.execute("CREATE INDEX saved_knowledge_search ON saved_knowledge USING gin (search)")
    else:
        db.execute("CREATE VIRTUAL TABLE saved_knowledge_fts USING fts5(topic, content)")
    db.execute(
        f"""
        CREATE TABLE learnings (
            id {key},
            owner TEXT NOT NULL,
            agent TEXT NOT NULL,
            tool TEXT,
            lesson TEXT NOT NULL,
            lesson_hash TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            created_at {real} NOT NULL,
            UNIQUE (owner, agent, lesson_hash)
        )
        """
    )
    # RAG: one row per indexed file, one row per chunk (on SQLite an FTS row per chunk,
    # rowid = chunk id).
    db.execute(
        f"""
        CREATE TABLE rag_files (
            id {key},
            owner TEXT NOT NULL,
            index_name TEXT NOT NULL,
            path TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime {real} NOT NULL,
            chunks INTEGER NOT NULL,
            UNIQUE (owner, index_name, path)
        )
        """
    )
    db.execute(
        f"""
        CREATE TABLE rag_chunks (
            id {key},
            file_id {reference} NOT NULL REFERENCES rag_files (id) ON DELETE CASCADE,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            text TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX rag_chunks_file ON rag_chunks (file_id)")
    if postgres:
        db.execute(
            "ALTER TABLE rag_chunks ADD COLUMN search tsvector GENERATED ALWAYS AS "
            "(to_tsvector('simple', text)) STORED"
        )
        db.execute("CREATE INDEX rag_chunks_search ON rag_chunks USING gin (search)")
    else:
        db.execute("CREATE VIRTUAL TABLE rag_chunks_fts USING fts5(text)")
