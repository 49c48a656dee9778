"""``rag_index`` and ``rag_query``: local text files, chunked, in full-text search.

The index lives in this plugin's tables on the store's backend (SQLite FTS5, or
PostgreSQL ``tsvector`` when the store is PostgreSQL: an index built on one node is
queried from every node).

``rag_index`` reads a directory inside ``rag_root`` (text and markdown files, each
opened beneath the root: links that lead out are skipped, whenever made), cuts each
file into chunks of at most ``chunk_lines`` lines — a markdown heading starts a new
chunk — and replaces the index's previous content in one transaction, so indexing
again is safe. ``rag_query`` returns the best
chunks with their file and first line. Indexes belong to the owner who built them.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from toolang_core import (
    OutsideRoot,
    ToolCallContext,
    files_beneath,
    open_beneath,
    relative_name,
)
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


def _root(context: ToolCallContext) -> tuple[Path, Path]:
    """The documents root, resolved, and as configured (absolute): an absolute path
    written through a link to the root is inside it too."""
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
    real, spelled = root.resolve(), Path(os.path.normpath(root))
    # its words name the root only when they lead there (not "docs/.." past a link)
    return real, spelled if spelled.resolve() == real else real


WHAT = "the documents root"


def _directory(root: Path, directory: str, configured: Path | None) -> int:
    """A descriptor of ``directory``, opened beneath ``root``
    (:func:`toolang_core.open_beneath`; ``configured``: the root as configured)."""
    try:
        return open_beneath(
            root, directory, os.O_RDONLY | os.O_DIRECTORY, what=WHAT, configured=configured
        )
    except OutsideRoot:
        raise LibrarianError(
            f"directory: {directory!r} is outside the documents root; give a path inside it"
        ) from None
    except OSError:
        raise LibrarianError(
            f"directory: {directory!r} is not a directory of the documents root"
        ) from None


class Read(NamedTuple):
    """One file read for indexing: its path relative to the root, text, size and mtime."""

    path: str
    text: str
    size: int
    mtime: float


def _files(
    root: Path, directory: str, context: ToolCallContext, configured: Path | None = None
) -> tuple[list[Read], list[str]]:
    """The text files under ``directory``, each opened beneath ``root`` (a link is
    followed only while it stays in it; ``configured``: the root as configured, see
    :func:`_root`), and what was skipped and why."""
    settings = settings_of(runtime_of(context))
    base = _directory(root, directory, configured)
    try:
        where = relative_name(root, base, directory)
        names = sorted(files_beneath(base), key=lambda name: name.split("/"))  # as Paths sort
    finally:
        os.close(base)
    files: list[Read] = []
    skipped: list[str] = []
    for name in names:
        relative = name if where == "." else f"{where}/{name}"
        if PurePosixPath(name).suffix.lower() not in settings.rag_extensions:
            continue
        try:
            fd = open_beneath(
                root, relative, os.O_RDONLY | os.O_NONBLOCK, what=WHAT, configured=configured
            )
        except OutsideRoot:
            skipped.append(f"{relative}: a link out of the documents root")
            continue
        except OSError:
            continue  # gone meanwhile, or a link to nothing
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # a directory a link names, a pipe, a device
            os.close(fd)  # (fdopen would refuse a directory, leaving the descriptor open)
            continue
        with os.fdopen(fd, "rb") as handle:
            if info.st_size > settings.max_file_bytes:
                skipped.append(f"{relative}: larger than max_file_bytes")
                continue
            if len(files) >= settings.max_files:
                skipped.append(f"{relative}: more than max_files files")
                continue
            try:
                text = handle.read(settings.max_file_bytes + 1).decode("utf-8")
            except (UnicodeDecodeError, OSError) as exc:
                skipped.append(f"{relative}: not readable as UTF-8 text ({exc})")
                continue
        files.append(Read(relative, text, info.st_size, info.st_mtime))
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
    root, configured = _root(context)
    files, skipped = _files(root, directory, context, configured)
    chunk_lines = settings_of(runtime_of(context)).chunk_lines
    loaded = [(read, chunks_of(read.text, chunk_lines)) for read in files]
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
        for read, chunks in loaded:
            file_id = db.execute(
                "INSERT INTO rag_files (owner, index_name, path, size, mtime, chunks) "
                "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                [owner, index, read.path, read.size, read.mtime, len(chunks)],
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
