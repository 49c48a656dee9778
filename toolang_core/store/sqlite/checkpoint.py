"""The runtime that owns the store copies its write-ahead log back in the background.

SQLite's own auto-checkpoint runs inside whichever commit pushes the WAL past 1,000
pages: that commit then copies the log into the database file and, with
``synchronous = normal``, waits for two fsyncs — a submit or a turn's finish pays for
everybody's writes, and the runtime's event loop stalls meanwhile. The runtime instead
runs ``PRAGMA wal_checkpoint(PASSIVE)`` on its own connection in a daemon thread
(SQLite releases the GIL while it works), often enough that the log stays below the
auto-checkpoint size, so commits only append. Durability is unchanged: a commit is in
the WAL either way; a checkpoint only moves it to the main file.

The runtime's own connection keeps a larger auto-checkpoint size as a safety net (the
thread stopping, a reader holding the log for long); every other connection — the CLI,
a second process submitting — keeps SQLite's default.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import structlog

from toolang_core.store.sqlite.connection import connect

log = structlog.get_logger("toolang.store")

SAFETY_NET_PAGES = 4_000
"""Auto-checkpoint size of the owning runtime's connection (about 16 MB of log)."""

RESTART_AT = 1_000
"""Frames in the log above which the thread also asks for a restart. A passive
checkpoint never waits for anybody, so under a steady stream of commits it copies
everything but the newest frames and the log keeps growing; ``RESTART`` takes the write
lock for the short remainder (a writer waits that long, not for the whole copy) and the
next commit starts the log from its beginning again."""

BUSY_INTERVAL = 0.01
"""Seconds between checkpoints while the log keeps growing."""

IDLE_INTERVAL = 0.5
"""Longest pause between checkpoints once nothing is being written."""


class WalCheckpointer:
    """A daemon thread checkpointing ``path``'s WAL until :meth:`stop`."""

    def __init__(self, path: Path, *, synchronous: str) -> None:
        self.path = path
        self._conn = connect(path, read_only=False, synchronous=synchronous, busy_timeout=0.0)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"toolang-checkpoint:{path.name}", daemon=True
        )
        self.checkpoints = 0
        """Checkpoints that copied at least one page (for tests and diagnostics)."""

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and close its connection (waits for a running checkpoint)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self._conn.close()

    def checkpoint(self) -> int:
        """One passive checkpoint; returns how many of the log's frames are now in the
        database file (0 when the log is empty)."""
        # fetchall, not fetchone: a statement left unfinished keeps its read lock on
        # the log, and the writers could never start it over from the beginning.
        rows = self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        if not rows or rows[0][1] < 0:  # not in WAL mode
            return 0
        return int(rows[0][2])

    def _run(self) -> None:
        interval = BUSY_INTERVAL
        backfilled = 0  # frames of the log already copied, as of the last look
        failing = False
        while not self._stop.wait(interval):
            try:
                copied = self.checkpoint()
                if copied > RESTART_AT:  # busy_timeout 0: gives up at once if a writer is in
                    self._conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchall()
            except sqlite3.Error as exc:
                if not failing:  # once per streak, not every tick
                    log.warning("store.checkpoint_failed", path=str(self.path), error=str(exc))
                failing = True
                interval = IDLE_INTERVAL
                continue
            failing = False
            if copied != backfilled:  # the log moved since the last look
                self.checkpoints += 1
                interval = BUSY_INTERVAL
            else:
                interval = min(IDLE_INTERVAL, interval * 2)
            backfilled = copied
