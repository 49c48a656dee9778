"""``rag_index`` and ``rag_query``: local text files, chunked, in full-text search.

The index lives in this plugin's tables on the store's backend (SQLite FTS5, or
PostgreSQL ``tsvector`` when the store is PostgreSQL: an index built on one node is
queried from every node).

``rag_index`` reads a directory inside ``rag_root`` (text and markdown files; links
that lead out are skipped), cuts each file into chunks of at most ``chunk_lines``
lines — a markdown heading starts a new chunk — and replaces the index's previous
content in one transaction, so indexing again is safe. ``rag_query`` returns the best
chunks with their file and first line. Indexes belong to the owner who built them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolang_core import ToolCallContext
from toolang_tools_librarian.common import (
    LibrarianError,
    own_database,
    owner_of,
    runtime_of,
    settings_of,
    sql_for,
)
from toolang_tools_librarian.knowledge import terms_of

INDEX_NAME = r"^[a-z0-9][a-z0-9_.-]{0,63}$"
SHOWN_CHARS = 800


def chunks_of(text: str, chunk_lines: int) -> list[tuple[int, int, str]]:
    """``(first line, last line, text)`` of each chunk (1-based lines, blank-only chunks
    left out)."""
    out: list[tuple[int, int, str]] = []
    current: list[str] = []
    start = 1

    def close(end: int) -> None:
        if any(line.strip() for line in current):
            out.append((start, end, "\n".join(current).strip("\n")))

    for number, line in enumerate(text.splitlines(), 1):
        if current and (len(current) >= chunk_lines or line.lstrip().startswith("#")):
            close(number - 1)
            current, start = [], number
        current.append(line)
    close(start + len(current) - 1)
    return out


def _root(context: ToolCallContext) -> Path:
    runtime = runtime_of(context)
    configured = settings_of(runtime).rag_root
    root = Path(configured) if configured is not None else Path(runtime.config.home) / "documents"
    if not root.is_absolute():
        root = Path(runtime.config.base_dir) / root
    if not root.is_dir():
        raise LibrarianError(
            f"the documents root {root} does not exist; create it or set "
            "[plugins.tools-librarian] rag_root"
        )
    return root.resolve()


def _inside(root: Path, directory: str) -> Path:
    target = (root / directory).resolve()
    if target != root and root not in target.parents:
        raise LibrarianError(
            f"directory: {directory!r} is outside the documents root; give a path inside it"
        )
    if not target.is_dir():
        raise LibrarianError(f"directory: {directory!r} is not a directory of the documents root")
    return target


def _files(root: Path, base: Path, context: ToolCallContext) -> tuple[list[Path], list[str]]:
    settings = settings_of(runtime_of(context))
    files: list[Path] = []
    skipped: list[str] = []
    for path in sorted(base.rglob("*")):
        if path.suffix.lower() not in settings.rag_extensions or not path.is_file():
            continue
        real = path.resolve()
        relative = str(path.relative_to(root))
        if root not in real.parents:
            skipped.append(f"{relative}: a link out of the documents root")
        elif real.stat().st_size > settings.max_file_bytes:
            skipped.append(f"{relative}: larger than max_file_bytes")
        elif len(files) >= settings.max_files:
            skipped.append(f"{relative}: more than max_files files")
        else:
            files.append(path)
    return files, skipped


def rag_index(
    directory: str = ".", index: str = "default", context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Index the text and markdown files of a directory for rag_query (replacing what
    the index held before).

    :param directory: a directory inside the documents root
    :param index: the index name (lowercase letters, digits, '.', '_', '-')
    """
    assert context is not None
    owner = owner_of(context)
    root = _root(context)
    files, skipped = _files(root, _inside(root, directory), context)
    chunk_lines = settings_of(runtime_of(context)).chunk_lines
    loaded: list[tuple[Path, list[tuple[int, int, str]]]] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError) as exc:
            skipped.append(f"{path.relative_to(root)}: not readable as UTF-8 text ({exc})")
            continue
        loaded.append((path, chunks_of(text, chunk_lines)))
    db = own_database(runtime_of(context))
    sql = sql_for(db)
    with db.transaction():
        sql.chunks_unindexed(db, owner, index)
        db.execute(
            "DELETE FROM rag_chunks WHERE file_id IN "
            "(SELECT id FROM rag_files WHERE owner = ? AND index_name = ?)",
            [owner, index],
        )
        db.execute("DELETE FROM rag_files WHERE owner = ? AND index_name = ?", [owner, index])
        total = 0
        for path, chunks in loaded:
            stat = path.stat()
            file_id = db.execute(
                "INSERT INTO rag_files (owner, index_name, path, size, mtime, chunks) "
                "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                [
                    owner,
                    index,
                    str(path.relative_to(root)),
                    stat.st_size,
                    stat.st_mtime,
                    len(chunks),
                ],
            ).fetchone()[0]
            db.executemany(
                "INSERT INTO rag_chunks (file_id, start_line, end_line, text) VALUES (?, ?, ?, ?)",
                [(file_id, first, last, text) for first, last, text in chunks],
            )
            total += len(chunks)
        sql.chunks_indexed(db, owner, index)
    return {"index": index, "files": len(loaded), "chunks": total, "skipped": skipped}


def rag_query(
    query: str, index: str = "default", limit: int = 5, context: ToolCallContext | None = None
) -> list[dict[str, Any]]:
    """Find the passages of an index that best match a query, with file and line.

    :param query: words to look for
    :param index: the index to search (built with rag_index)
    :param limit: at most this many passages (1 to 50)
    """
    assert context is not None
    owner = owner_of(context)
    words = terms_of(query)
    db = own_database(runtime_of(context))
    known = [
        row[0]
        for row in db.execute(
            "SELECT DISTINCT index_name FROM rag_files WHERE owner = ? ORDER BY 1", [owner]
        )
    ]
    if index not in known:
        raise LibrarianError(
            f"index: no index {index!r} (yours: {', '.join(known) or 'none'}); "
            "build it with rag_index"
        )
    found = db.execute(*sql_for(db).rag_search(words, owner, index, limit)).fetchall()
    return [
        {
            "path": path,
            "line": first,
            "end_line": last,
            "text": text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + " …",
            "score": round(score, 4),
        }
        for path, first, last, text, score in found
    ]
