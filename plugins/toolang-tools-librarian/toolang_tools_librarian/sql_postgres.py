"""The librarian's SQL that only PostgreSQL speaks: the generated ``search`` columns
(``tsvector``, configuration ``simple``) ranked with ``ts_rank_cd``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolang_core import PluginDatabase


def match(words: list[str]) -> str:
    """A ``to_tsquery`` text matching any of ``words`` (each a quoted lexeme: ``terms_of``
    leaves only word characters, so nothing in it is an operator)."""
    return " | ".join("'" + w.replace("'", "''").replace("\\", "") + "'" for w in words)


def contains(column: str) -> str:
    """``column`` (lowercased) holds the parameter."""
    return f"strpos(lower({column}), ?) > 0"


def saved_search(words: list[str], owner: str, agent: str | None) -> tuple[str, list[Any]]:
    """``(id, agent, topic, content, thread_id, created_at)`` of the best matches."""
    sql = (
        "SELECT k.id, k.agent, k.topic, k.content, k.thread_id, k.created_at "
        "FROM saved_knowledge k, to_tsquery('simple', ?) q "
        "WHERE k.search @@ q AND k.owner = ?"
    )
    params: list[Any] = [match(words), owner]
    if agent is not None:
        sql += " AND k.agent = ?"
        params.append(agent)
    return sql + " ORDER BY ts_rank_cd(k.search, q) DESC, k.id LIMIT 200", params


def saved_indexed(db: PluginDatabase, entry_id: int, topic: str, content: str) -> None:
    """Nothing to do: the ``search`` column is generated with the row."""


def chunks_unindexed(db: PluginDatabase, owner: str, index: str) -> None:
    """Nothing to do: the ``search`` column goes with its chunk."""


def chunks_indexed(db: PluginDatabase, owner: str, index: str) -> None:
    """Nothing to do: the ``search`` column is generated with each chunk."""


def rag_search(words: list[str], owner: str, index: str, limit: int) -> tuple[str, list[Any]]:
    """``(path, start_line, end_line, text, score)`` of the best chunks, best first."""
    return (
        "SELECT f.path, c.start_line, c.end_line, c.text, ts_rank_cd(c.search, q) "
        "FROM rag_chunks c JOIN rag_files f ON f.id = c.file_id, to_tsquery('simple', ?) q "
        "WHERE c.search @@ q AND f.owner = ? AND f.index_name = ? "
        "ORDER BY 5 DESC, c.id LIMIT ?",
        [match(words), owner, index, limit],
    )
