"""The runtime watches its store's files: a database or log deleted or replaced under it
stops it loudly.

SQLite keeps writing through the descriptors it holds: after ``rm toolang.db-wal`` (or a
restore that moves another file into place) this runtime would go on acknowledging
requests into a log nobody will ever read, while other processes start a new one.
:class:`StoreFiles` remembers the identity (device, inode) of the database file, its
``-wal`` and its ``-shm`` when the runtime takes the store, and the store compares them
on every heartbeat and, at most every :data:`CHECK_INTERVAL` seconds, before a write.

When one changed, the runtime first copies what its own connection still sees — the
old database and log, every request it acknowledged — to ``<db>.rescued-<time>`` with
``VACUUM INTO`` (the live files are left alone: other processes may be writing new
ones), then every write raises :class:`StoreReplaced` and the runtime stops.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Final

import structlog

from toolang_core.store.errors import StoreReplaced

log = structlog.get_logger("toolang.store")

CHECK_INTERVAL: Final = 0.25
"""Seconds between checks on the write path (a check is three ``stat`` calls)."""


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino


class StoreFiles:
    """The database file and its ``-wal`` and ``-shm``, as the runtime found them."""

    def __init__(self, db_path: Path) -> None:
        self.paths = (
            db_path,
            db_path.with_name(db_path.name + "-wal"),
            db_path.with_name(db_path.name + "-shm"),
        )
        self._known = {path: _identity(path) for path in self.paths}
        self._next_check = time.monotonic() + CHECK_INTERVAL
        self.problem: str | None = None
        """Set for good once a file was found deleted or replaced."""
        self.rescue_note: str | None = None
        """What :meth:`rescue` did, for the error."""

    def check(self, *, now: float | None = None, force: bool = False) -> str | None:
        """What happened to a file, or ``None`` while all are as found. Without
        ``force``, looks at most every :data:`CHECK_INTERVAL` seconds."""
        if self.problem is not None:
            return self.problem
        moment = time.monotonic() if now is None else now
        if not force and moment < self._next_check:
            return None
        self._next_check = moment + CHECK_INTERVAL
        for path in self.paths:
            known, current = self._known[path], _identity(path)
            if known is None:  # SQLite had not made it yet: take it as it is now
                self._known[path] = current
                continue
            if current == known:
                continue
            what = "was deleted" if current is None else "was replaced by another file"
            self.problem = f"{path} {what} while this runtime was using it"
            return self.problem
        return None

    def rescue(self, conn: sqlite3.Connection) -> None:
        """Copy what ``conn`` sees (the runtime's view: everything it acknowledged) to
        ``<db>.rescued-<time>``; called once, when a change was found."""
        db = self.paths[0]
        target = db.with_name(f"{db.name}.rescued-{int(time.time())}")
        try:
            conn.execute("VACUUM INTO ?", (str(target),))
        except sqlite3.Error as exc:
            log.critical("store.rescue_failed", store=str(db), copy=str(target), error=str(exc))
            self.rescue_note = f"Copying what it had stored to {target} failed ({exc})."
            return
        log.critical("store.rescued", store=str(db), copy=str(target), problem=self.problem)
        self.rescue_note = (
            f"Everything it had stored (every request it acknowledged) was copied to "
            f"{target}; requests submitted since may be only in the new files."
        )

    def error(self) -> StoreReplaced:
        return StoreReplaced(
            f"{self.problem}: this runtime stops so that it acknowledges nothing more into "
            f"files nobody will read. {self.rescue_note or ''} Stop every toolang process "
            f"using {self.paths[0]} before starting again (docs/store.md: 'Files deleted "
            "under a running runtime')"
        )


def take_orphaned_log(db: Path, holder_pid: int | None) -> None:
    """Before a process creates ``db``: refuse to put a new database under a log whose
    database was deleted.

    SQLite reads ``<db>-wal`` and ``<db>-shm`` by name: a new database file opened
    beside the old one's log would be read through it and written into it — the new
    store corrupt, and the runtime still using the deleted file robbed of the log it
    rescues from. While the process that used them is alive (``holder_pid``, from the
    runtime's lock note) the open is refused; that runtime notices the deletion, rescues
    what it stored and stops. Once nobody is left, the orphaned files are moved aside
    to ``<file>.orphaned-<time>`` (never deleted) and a new store begins.

    :raises StoreReplaced: the database is missing, its log is there, and the runtime
        that used them is still running.
    """
    if db.exists():
        return
    left = [
        path
        for path in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm"))
        if path.exists()
    ]
    if not left:
        return
    names = " and ".join(str(path) for path in left)
    if holder_pid is not None and _alive(holder_pid):
        raise StoreReplaced(
            f"{db} is missing but its log ({names}) is still there: the database was "
            f"deleted while the runtime (pid {holder_pid}) was using it. A new store "
            "opened under that log would be corrupt, so nothing was written; that "
            "runtime rescues what it stored and stops (docs/store.md: 'Files deleted "
            "under a running runtime')"
        )
    stamp = int(time.time())
    for path in left:
        target = path.with_name(f"{path.name}.orphaned-{stamp}")
        try:
            path.rename(target)
        except FileNotFoundError:  # another process moved it first
            continue
        log.warning("store.orphaned_log_moved", store=str(db), file=str(path), to=str(target))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def abandon(conn: sqlite3.Connection) -> None:
    """Never close ``conn``, not even when the interpreter exits.

    When the last connection to a WAL database closes, SQLite copies its log into the
    database file and deletes ``<db>-wal`` — by name. After the files were deleted or
    replaced, that name is another process's new log and that file may hold its new
    writes: this runtime's old connection must never do either. An extra reference the
    interpreter never drops keeps it from being closed; the kernel closes its descriptors
    when the process ends, which copies and deletes nothing.
    """
    import ctypes

    ctypes.pythonapi.Py_IncRef(ctypes.py_object(conn))
