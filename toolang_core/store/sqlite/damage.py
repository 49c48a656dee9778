"""A damaged store file: found on opening (the edges of every table), before the first
write (``PRAGMA quick_check``), or by any command that meets a damaged page — each says
the same thing, with what ``toolang doctor`` advises, and writes nothing into the file."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from toolang_core.store.errors import StoreCorrupt


def damaged(path: Path | str, detail: str, *, setting: str = "[store] path") -> StoreCorrupt:
    """The error for a store file SQLite cannot read, with what ``toolang doctor``
    advises (every command that meets the file says the same). ``setting``: where the
    file's place is configured (a plugin's database names its own)."""
    what = "toolang store" if setting == "[store] path" else "database"
    return StoreCorrupt(
        f"{path} is not a readable {what} ({detail}); it was left untouched — "
        f"restore it from a backup (or `sqlite3 {path} .recover`), or point {setting} "
        "elsewhere; `toolang doctor` checks it"
    )


CORRUPTION = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})
"""SQLite's result codes for a file it cannot read as a database (extended codes such
as ``SQLITE_CORRUPT_INDEX`` start with these)."""


def is_corruption(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite finding a damaged or foreign file."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return isinstance(exc, sqlite3.DatabaseError) and name.startswith(tuple(CORRUPTION))


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite finding the file locked by another connection
    (``SQLITE_BUSY`` or ``SQLITE_LOCKED``): nothing about the file, try again."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    return isinstance(exc, sqlite3.Error) and code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def probe_btrees(conn: sqlite3.Connection, path: Path) -> None:
    """Read each table's first and last row and each index's first entry: the root page
    every read and write of it starts from, and the pages along both edges. Cheap (a few
    pages per table); a damaged root shows here, on opening, before anything is read or
    written — not in the middle of a command. (Only ``PRAGMA quick_check`` reads every
    page: a store runs it before its first write, ``toolang doctor`` reports it.)

    :raises StoreCorrupt: SQLite found a damaged page."""
    try:
        objects = conn.execute(
            "SELECT type, name, tbl_name FROM sqlite_master "
            "WHERE type IN ('table', 'index') AND rootpage > 0"
        ).fetchall()
        for kind, name, table in objects:
            # Whole rows: a damaged page's cells are found when a row is decoded.
            if kind == "table":
                probes = [
                    f"SELECT * FROM {_ident(name)} NOT INDEXED LIMIT 1",
                    f"SELECT * FROM {_ident(name)} NOT INDEXED ORDER BY rowid DESC LIMIT 1",
                ]
            else:
                probes = [f"SELECT * FROM {_ident(table)} INDEXED BY {_ident(name)} LIMIT 1"]
            for sql in probes:
                try:
                    conn.execute(sql).fetchall()
                except sqlite3.DatabaseError as exc:
                    if is_corruption(exc):
                        raise
                    # e.g. a WITHOUT ROWID table, a partial index: no such probe
    except sqlite3.DatabaseError as exc:
        raise damaged(path, str(exc)) from None


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quick_check(conn: sqlite3.Connection, limit: int = 10) -> list[str]:
    """What ``PRAGMA quick_check`` finds wrong with the file (damaged pages, broken
    indexes), at most ``limit`` lines; empty when it is sound. Reads the whole file."""
    try:
        rows = conn.execute(f"PRAGMA quick_check({int(limit)})").fetchall()
    except sqlite3.DatabaseError as exc:  # too damaged to even walk
        return [str(exc)]
    found = [line for r in rows for line in str(r[0]).splitlines()]
    return [] if found == ["ok"] else [f for f in found if not f.startswith("*** ")]


_SOUND: set[tuple[int, int]] = set()
"""The files (device, inode) this process found sound with ``PRAGMA quick_check``: a
process opening the same store again and again (``ainvoke`` in a loop, a CLI opening an
inbox and a store) reads the whole file once, not at every open."""


def verify_once(conn: sqlite3.Connection, path: Path) -> None:
    """``PRAGMA quick_check`` of ``path``, unless this process already found this file
    (this inode: a file put in its place is checked again) sound.

    :raises StoreCorrupt: naming what is damaged, with the advice to restore it."""
    try:
        stat = os.stat(path)
    except OSError:
        return  # gone: the store's guard says so at the write
    key = (stat.st_dev, stat.st_ino)
    if key in _SOUND:
        return
    problems = quick_check(conn, limit=3)
    if problems:
        raise damaged(path, "; ".join(problems))
    _SOUND.add(key)
