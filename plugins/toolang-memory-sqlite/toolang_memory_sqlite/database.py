"""Connections to the memory database: one per thread, writes one at a time.

The runtime calls the plugin's methods in worker threads, several at once. Each thread
gets its own SQLite connection (WAL: readers never wait for the writer), and writes
of this process take one lock, so they queue here instead of spinning on SQLite's
busy handler; writes of other processes (the store's, when the file is shared) are
waited for up to ``busy_timeout_seconds``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from toolang_core import open_plugin_database
from toolang_memory_sqlite.schema import MIGRATIONS


class MemoryClosed(RuntimeError):
    """The plugin was closed; the runtime builds a new one when it needs memory again."""


class Connections:
    """Per-thread connections to ``path`` (created and migrated on first use)."""

    def __init__(self, path: Path, *, busy_timeout: float, synchronous: str = "normal") -> None:
        self.path = path
        self._busy_timeout = busy_timeout
        self._synchronous = synchronous
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()  # guards _all and _closed
        self._closed = False
        self.write_lock = threading.Lock()

    def get(self) -> sqlite3.Connection:
        """This thread's connection.

        :raises MemoryClosed: after :meth:`close`.
        :raises toolang_core.StoreError: the file cannot be opened as this plugin's.
        """
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and not self._closed:
            return conn
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
        self._local.conn = db.conn
        return db.conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on error)."""
        conn = self.get()
        with self.write_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        """Close every thread's connection; later calls raise :class:`MemoryClosed`."""
        with self._lock:
            self._closed = True
            connections, self._all = self._all, []
        for conn in connections:
            conn.close()
