"""The librarian's SQL that only SQLite speaks: FTS5 tables kept beside the rows
(:mod:`.sql` picks this module or :mod:`.sql_postgres` by the database's dialect)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolang_core import PluginDatabase


def match(words: list[str]) -> str:
    """An FTS5 expression matching any of ``words`` (each quoted: no operator injection)."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def contains(column: str) -> str:
    """``column`` (lowercased) holds the parameter."""
    return f"instr(lower({column}), ?) > 0"


def saved_search(words: list[str], owner: str, agent: str | None) -> tuple[str, list[Any]]:
    """``(id, agent, topic, content, thread_id, created_at)`` of the best matches."""
    sql = (
        "SELECT k.id, k.agent, k.topic, k.content, k.thread_id, k.created_at "
        "FROM saved_knowledge_fts f JOIN saved_knowledge k ON k.id = f.rowid "
        "WHERE saved_knowledge_fts MATCH ? AND k.owner = ?"
    )
    params: list[Any] = [match(words), owner]
    if agent is not None:
        sql += " AND k.agent = ?"
        params.append(agent)
    return sql + " ORDER BY bm25(saved_knowledge_fts) LIMIT 200", params


def saved_indexed(db: PluginDatabase, entry_id: int, topic: str, content: str) -> None:
    """Make a new ``saved_knowledge`` row searchable."""
    db.execute(
        "INSERT INTO saved_knowledge_fts (rowid, topic, content) VALUES (?, ?, ?)",
        [entry_id, topic, content],
    )


def chunks_unindexed(db: PluginDatabase, owner: str, index: str) -> None:
    """Drop the search rows of ``index``'s chunks (before the chunks go)."""
    db.execute(
        "DELETE FROM rag_chunks_fts WHERE rowid IN (SELECT c.id FROM rag_chunks c "
        "JOIN rag_files f ON f.id = c.file_id WHERE f.owner = ? AND f.index_name = ?)",
        [owner, index],
    )


def chunks_indexed(db: PluginDatabase, owner: str, index: str) -> None:
    """Make ``index``'s chunks searchable."""
    db.execute(
        "INSERT INTO rag_chunks_fts (rowid, text) SELECT c.id, c.text FROM rag_chunks c "
        "JOIN rag_files f ON f.id = c.file_id WHERE f.owner = ? AND f.index_name = ?",
        [owner, index],
    )


def rag_search(words: list[str], owner: str, index: str, limit: int) -> tuple[str, list[Any]]:
    """``(path, start_line, end_line, text, score)`` of the best chunks, best first
    (score: higher is better)."""
    return (
        "SELECT f.path, c.start_line, c.end_line, c.text, -bm25(rag_chunks_fts) "
        "FROM rag_chunks_fts JOIN rag_chunks c ON c.id = rag_chunks_fts.rowid "
        "JOIN rag_files f ON f.id = c.file_id "
        "WHERE rag_chunks_fts MATCH ? AND f.owner = ? AND f.index_name = ? "
        "ORDER BY bm25(rag_chunks_fts) LIMIT ?",
        [match(words), owner, index, limit],
    )
