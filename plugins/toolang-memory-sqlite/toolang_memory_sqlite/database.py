"""Connections to the memory database: one per thread, writes one at a time.

The runtime calls the plugin's methods in worker threads, several at once. Each thread
gets its own SQLite connection (WAL: readers never wait for the writer), and writes
of this process take one lock, so they queue here instead of spinning on SQLite's
busy handler; writes of other processes (the store's, when the file is shared) are
waited for up to ``busy_timeout_seconds``.

The runtime's recalls and writes share one more connection, :meth:`Connections.main`:
calls done at once in the event loop's thread use it, and so does the plugin's database
thread (:mod:`.group`) — one page cache for both (another connection's write makes
SQLite drop a reader's whole cache). Whoever uses it holds :attr:`Connections.main_lock`.

From the first write on, a :class:`toolang_core.PluginCheckpointer` copies the
write-ahead log into the file in a thread of its own, so a write's commit never does
(SQLite's auto-checkpoint would, every 1,000 pages of log: milliseconds, in the
database thread a turn's recall waits for). Not when the file is the store's: the
runtime's checkpointer keeps that one; the writes share its writers' lock either way.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from toolang_core import PluginCheckpointer, open_plugin_database
from toolang_memory_sqlite.schema import MIGRATIONS

RETRY_START_SECONDS = 60.0
"""How long after a checkpointer that could not start a write tries again."""


class MemoryClosed(RuntimeError):
    """The plugin was closed; the runtime builds a new one when it needs memory again."""


class WriteBusy(RuntimeError):
    """A write that was not to wait (:meth:`Connections.write` with ``wait=False``)
    found the database being written: nothing was done."""


class Connections:
    """Per-thread connections to ``path`` (created and migrated on first use)."""

    def __init__(
        self,
        path: Path,
        *,
        busy_timeout: float,
        synchronous: str = "normal",
        checkpoints: bool = True,
    ) -> None:
        """``checkpoints``: whether the first write starts the log's checkpointer
        (not for the store's own file: the runtime checkpoints it)."""
        self.path = path
        self._busy_timeout = busy_timeout
        self._synchronous = synchronous
        self.commits_wait_for_disk = synchronous.lower() in ("full", "extra", "2", "3")
        """Each commit waits for the disk (``synchronous`` ``full`` or ``extra``; with
        ``normal`` a commit to the write-ahead log does not)."""
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()  # guards _all and _closed
        self._closed = False
        self.write_lock = threading.Lock()
        self.main_lock = threading.Lock()
        """Held while :meth:`main` is used."""
        self._main: sqlite3.Connection | None = None
        self._main_waits = True
        self._log = PluginCheckpointer(path, synchronous=synchronous)
        # Stopped when this object goes without close() too (its thread would outlive it).
        weakref.finalize(self, self._log.close)
        self._checkpoints = checkpoints
        self._start_at = 0.0  # a failed start is tried again on a write after this time

    def get(self) -> sqlite3.Connection:
        """This thread's connection.

        :raises MemoryClosed: after :meth:`close`.
        :raises toolang_core.StoreError: the file cannot be opened as this plugin's.
        """
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and not self._closed:
            return conn
        conn = self._local.conn = self._open()
        return conn

    @property
    def main_opened(self) -> bool:
        """:meth:`main` is open: opening it (creating and migrating the file) may wait
        for another process's write, and is for a caller that may wait."""
        return self._main is not None and not self._closed

    def main(self, *, waits: bool = True) -> sqlite3.Connection:
        """The connection of the runtime's recalls and writes, whatever thread runs
        them (the caller holds :attr:`main_lock`). :raises MemoryClosed:

        ``waits``: its statements wait out another process's write (SQLite's busy
        timeout, ``busy_timeout_seconds``), as the database thread's do; without, they
        fail at once with ``SQLITE_BUSY`` (a call done in the event loop's thread, which
        then goes to the thread). The timeout is set only when the other kind of
        caller used the connection last: one at a time, every call is of one kind."""
        conn = self._main
        if conn is None or self._closed:
            conn = self._main = self._open()
            self._main_waits = True
        if waits is not self._main_waits:
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000) if waits else 0}")
            self._main_waits = waits
        return conn

    def _open(self) -> sqlite3.Connection:
        with self._lock:
            if self._closed:
                raise MemoryClosed(f"memory-sqlite on {self.path} is closed")
            db = open_plugin_database(
                self.path,
                MIGRATIONS,
                synchronous=self._synchronous,
                busy_timeout=self._busy_timeout,
            )
            self._all.append(db.conn)
            self._log.join(db.conn)
        return db.conn

    @contextmanager
    def write(
        self, conn: sqlite3.Connection | None = None, *, wait: bool = True
    ) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on error)
        on ``conn`` (default: this thread's connection).

        :raises WriteBusy: with ``wait=False``, when another write of this process or
            of another one is under way (it is not waited for: ``conn`` must be
            :meth:`main` without ``waits``).
        """
        conn = self.get() if conn is None else conn
        if not self.write_lock.acquire(blocking=wait):
            raise WriteBusy(f"memory-sqlite on {self.path}: a write is under way")
        try:
            if self._checkpoints and time.monotonic() >= self._start_at:
                # the first write starts it; a failure (logged) is tried again in a while
                self._checkpoints = not self._log.start()
                self._start_at = time.monotonic() + RETRY_START_SECONDS
            # The checkpointer's last copy and this write wait for each other (a write
            # that is not to wait does not: the copy takes a fraction of a millisecond).
            if not self._log.lock.acquire(blocking=wait):
                raise WriteBusy(f"memory-sqlite on {self.path}: the log is being copied back")
            try:
                if wait:
                    conn.execute("BEGIN IMMEDIATE")
                else:
                    _begin_at_once(conn)
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            finally:
                self._log.lock.release()
        finally:
            self.write_lock.release()

    def close(self) -> None:
        """Close every thread's connection; later calls raise :class:`MemoryClosed`.
        Waits for the use of :meth:`main` under way (closing a connection another
        thread is using crashes SQLite's Python binding)."""
        self._log.close()  # waits for a checkpoint under way; a racing write starts none
        with self.main_lock, self._lock:
            self._closed = True
            connections, self._all = self._all, []
            self._main = None
        for conn in connections:
            conn.close()


def _begin_at_once(conn: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE`` on a connection without a busy timeout: :class:`WriteBusy`
    when another process writes."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if not busy(exc):
            raise
        raise WriteBusy(f"memory-sqlite: the database is being written ({exc})") from None


def busy(exc: BaseException | None) -> bool:
    """``exc`` is SQLite's ``SQLITE_BUSY`` (the file locked by another connection).

    Not every ``sqlite3.Error`` comes from SQLite: one raised by the module itself (text
    that does not decode as UTF-8, for one) has no ``sqlite_errorcode``."""
    code = getattr(exc, "sqlite_errorcode", None) if isinstance(exc, sqlite3.Error) else None
    return code is not None and code & 0xFF == sqlite3.SQLITE_BUSY
