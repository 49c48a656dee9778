"""The runtime that owns the store copies its write-ahead log back in the background.

SQLite's own auto-checkpoint runs inside whichever commit pushes the WAL past 1,000
pages: that commit then copies the log into the database file and, with
``synchronous = normal``, waits for two fsyncs — a submit or a turn's finish pays for
everybody's writes, and the runtime's event loop stalls meanwhile. The runtime instead
runs ``PRAGMA wal_checkpoint(PASSIVE)`` on its own connection in a daemon thread
(SQLite releases the GIL while it works), so commits only append. Durability is
unchanged: a commit is in the WAL either way; a checkpoint only moves it to the main file.

The store's thread looks every :data:`BUSY_INTERVAL`, and at once after every
:data:`WRITES_PER_LOOK` write transactions of the store's connections in this process
(they count theirs as they hold the lock they share, :attr:`LocalWriters.writing`): a
burst of small commits is looked at by how much it writes, and one of large ones (or of
writers that are not counted, e.g. a plugin's tables in the store's file) within
:data:`BUSY_INTERVAL` whatever came before.

A passive checkpoint never waits for writers, so under a steady stream of commits it
never catches up with the end of the log, and the log only starts over from its
beginning when a writer finds it copied entirely. So, once the log is long, the thread
copies what it can, then takes the lock this process's writers of the file share
(:class:`LocalWriters`) for the short rest: the log is then copied up to its last
frame with no writer of this process in between, and the next commit starts it over.
Writers wait for that copy (a fraction of a millisecond), never for the whole log.

While the thread runs, this process's connections to the file keep a larger
auto-checkpoint size as a safety net (the thread stopping, a reader holding the log for
long); connections of other processes — the CLI, a second process submitting — keep
SQLite's default.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import structlog

from toolang_core.store.sqlite.connection import connect

log = structlog.get_logger("toolang.store")

DEFAULT_PAGES = 1_000
"""SQLite's auto-checkpoint size, kept while no checkpointer runs in this process."""

SAFETY_NET_PAGES = 4_000
"""Auto-checkpoint size of this process's connections while its checkpointer runs
(about 16 MB of log)."""

RESTART_AT = 1_000
"""Frames in the log from which the thread arranges for it to start over."""

CATCH_UP_PASSES = 4
"""Passive checkpoints at most, before taking the writers' lock, to copy what was
written during the previous one; they stop once it was little (:data:`CAUGHT_UP`)."""

CAUGHT_UP = 64
"""Frames written during a pass few enough to copy with the writers held off."""

BUSY_INTERVAL = 0.1
"""Seconds between the store's checkpoints, busy or not (sooner when the writes wake
the thread, :data:`WRITES_PER_LOOK`). A page written over and over (a table's last
leaf, an index, the file's header page) is copied once per look, however often it was
written since the last: fewer, larger looks copy less. Measured on
``bench/agent_turns.py``'s burst (memory off, a quiet 2-core machine, six interleaved
rounds): looks every 10 ms cost about 4 % more CPU per turn than this. While nothing is
written a look is a passive checkpoint with nothing to copy."""

IDLE_INTERVAL = 0.5
"""Longest pause between checkpoints of any checkpointer once nothing is being written
(a plugin's grows to :data:`IDLE_LOOKS` busy intervals, up to this; the store's stays
at :data:`BUSY_INTERVAL`)."""

IDLE_LOOKS = 10
"""A plugin's checkpointer's pause grows to at most this many busy intervals while the
log grows little (and at most :data:`IDLE_INTERVAL`): its 0.1 s make 0.5 s."""

WRITES_PER_LOOK = 400
"""Write transactions of this process held in :attr:`LocalWriters.writing` (the
store's) after which the file's checkpointers look at once, whatever their pause. An
agent turn's commits write about 5 pages each: 400 of them, about 2,000 frames of log
(half the 4,000-page safety net), where a look every :data:`BUSY_INTERVAL` alone would
let a burst of them reach it. Larger transactions make more frames per look; the
timed look bounds those."""

BUSY_FRAMES = 64
"""Frames a checkpoint copies from which the next comes after :data:`BUSY_INTERVAL`;
fewer (a trickle of small commits), and the pauses grow as when nothing was written:
each look takes the GIL from the threads doing the work, for nothing to copy."""


class Writer(Protocol):
    def set_autocheckpoint(self, pages: int) -> None: ...


class LocalWriters:
    """This process's connections writing one store file, and the lock they share.

    A writer holds ``lock`` around each write (uncontended, it costs nothing
    measurable); the store's writers hold :attr:`writing` instead, the same lock, which
    counts their writes and wakes the checkpointers every :data:`WRITES_PER_LOOK`. The
    checkpointer holds ``lock`` for the last copy before the log starts over. While a
    checkpointer runs, the writers keep the safety-net auto-checkpoint.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._writers: weakref.WeakSet[Writer] = weakref.WeakSet()
        self._checkpointers = 0
        self.writing = _Writing(self.lock)
        """Hold around a write transaction: :attr:`lock`, counting the writes — every
        :data:`WRITES_PER_LOOK` wakes the checkpointers."""

    def wake_on_writes(self, wake: threading.Event, *, on: bool = True) -> None:
        """``wake`` is set after every :data:`WRITES_PER_LOOK` writes held in
        :attr:`writing` (until ``on=False``)."""
        with self.lock:
            wakes = self.writing.wakes
            if on and wake not in wakes:
                wakes.append(wake)
            elif not on and wake in wakes:
                wakes.remove(wake)

    def join(self, writer: Writer) -> None:
        """Count ``writer`` in; it takes the auto-checkpoint size of the moment."""
        with self.lock:
            self._writers.add(writer)
            writer.set_autocheckpoint(self._pages())

    def leave(self, writer: Writer) -> None:
        with self.lock:
            self._writers.discard(writer)

    def checkpointing(self, on: bool) -> None:
        """A checkpointer starts (or stops): every writer moves its auto-checkpoint."""
        with self.lock:
            self._checkpointers += 1 if on else -1
            for writer in list(self._writers):
                with contextlib.suppress(sqlite3.Error):  # closed meanwhile: nothing to set
                    writer.set_autocheckpoint(self._pages())

    def _pages(self) -> int:
        return SAFETY_NET_PAGES if self._checkpointers > 0 else DEFAULT_PAGES


class _Writing:
    """:attr:`LocalWriters.writing`: the writers' lock held around one write, counted
    (no reference back to the :class:`LocalWriters`: it goes with its last user)."""

    __slots__ = ("_acquire", "_release", "count", "wakes")

    def __init__(self, lock: threading.RLock) -> None:
        self._acquire = lock.acquire
        self._release = lock.release
        self.count = 0
        """Writes since the checkpointers were last woken (changed under the lock)."""
        self.wakes: list[threading.Event] = []
        """The running checkpointers' wake events (changed under the lock)."""

    def __enter__(self) -> None:
        self._acquire()

    def __exit__(self, *_: object) -> None:
        try:
            self.count += 1
            if self.count >= WRITES_PER_LOOK:
                self.count = 0
                for wake in self.wakes:
                    wake.set()
        finally:
            self._release()


class _Files:
    """This process's :class:`LocalWriters`, by file."""

    def __init__(self) -> None:
        self.by_path: weakref.WeakValueDictionary[str, LocalWriters] = weakref.WeakValueDictionary()
        self.lock = threading.Lock()

    def reset(self) -> None:
        self.by_path = weakref.WeakValueDictionary()
        self.lock = threading.Lock()


_FILES = _Files()

# A forked child starts with no writers and no checkpointer of its own: a lock that a
# thread of the parent held at the fork would stay held for ever there.
os.register_at_fork(after_in_child=_FILES.reset)


def local_writers(path: Path) -> LocalWriters:
    """The writers of ``path`` in this process (one object per file, however named)."""
    key = os.path.realpath(path)
    with _FILES.lock:
        writers = _FILES.by_path.get(key)
        if writers is None:
            writers = _FILES.by_path[key] = LocalWriters()
        return writers


class WalCheckpointer:
    """A daemon thread checkpointing ``path``'s WAL until :meth:`stop`."""

    def __init__(
        self,
        path: Path,
        *,
        synchronous: str,
        intact: Callable[[], bool] | None = None,
        busy_interval: float = BUSY_INTERVAL,
        idle_interval: float | None = None,
        open_timeout: float = 0.0,
    ) -> None:
        """``busy_interval``: seconds between looks while the log keeps growing (longer:
        fewer copies of the pages written over and over, a longer log between them).
        ``idle_interval``: the longest pause while it grows little or not at all
        (default: :data:`IDLE_LOOKS` busy intervals, at most :data:`IDLE_INTERVAL`).
        ``open_timeout``: how long opening may wait for another connection holding the
        file (a checkpoint itself never waits)."""
        self.path = path
        self._busy_interval = busy_interval
        self._idle_interval = (
            min(IDLE_INTERVAL, IDLE_LOOKS * busy_interval)
            if idle_interval is None
            else idle_interval
        )
        self._intact = intact
        """Whether the store's files are still those the runtime found (guard.py): a
        checkpoint into a database whose log was deleted would mix two histories."""
        self._conn = connect(
            path, read_only=False, synchronous=synchronous, busy_timeout=open_timeout
        )
        if open_timeout:
            self._conn.execute("PRAGMA busy_timeout = 0")
        self._writers = local_writers(path)
        self._stop = threading.Event()
        self._wake = threading.Event()  # set by stop(), and by the writes (LocalWriters)
        self._thread = threading.Thread(
            target=self._run, name=f"toolang-checkpoint:{path.name}", daemon=True
        )
        self.checkpoints = 0
        """Checkpoints that copied at least one page (for tests and diagnostics)."""
        self.restarts = 0
        """Times the log was copied to its end under the writers' lock (so it starts over)."""
        self.looks = 0
        """Checkpoints run, whether or not they copied anything."""
        self.last: tuple[int, int] | None = None
        """What the last checkpoint found: ``(frames in the log, frames of it copied)``.
        Equal numbers mean the log was copied to its end, and the next commit starts it
        over from its beginning — whichever checkpoint got there: a passive one catching
        up while writers are slow, or the copy under the writers' lock."""
        self._started = False

    def start(self) -> None:
        self._writers.checkpointing(True)
        self._writers.wake_on_writes(self._wake)
        self._started = True
        self._thread.start()

    def stop(self, *, close: bool = True) -> sqlite3.Connection:
        """Stop the thread and close its connection (waits for a running checkpoint);
        with ``close=False`` the connection is left open and returned."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join()
        if self._started:
            self._started = False
            self._writers.wake_on_writes(self._wake, on=False)
            self._writers.checkpointing(False)
        if close:
            self._conn.close()
        return self._conn

    def checkpoint(self) -> tuple[int, int] | None:
        """One passive checkpoint: ``(frames in the log, frames of it now in the database
        file)``, or ``None`` when it could not run (another connection is checkpointing)."""
        # fetchall, not fetchone: a statement left unfinished keeps its read lock on
        # the log, and the writers could never start it over from the beginning.
        rows = self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        self.looks += 1
        if not rows or rows[0][1] < 0:
            self.last = None if rows and rows[0][0] else (0, 0)  # busy, or not in WAL mode
        else:
            self.last = int(rows[0][1]), int(rows[0][2])
        return self.last

    def tick(self) -> int | None:
        """Copy what the log holds; past :data:`RESTART_AT` frames, copy the rest with
        this process's writers held off, so the next commit starts the log over.
        Returns the frames now copied, or ``None`` when the checkpoint could not run."""
        state = self.checkpoint()
        if state is None or state[0] <= RESTART_AT:
            return None if state is None else state[1]
        for _ in range(CATCH_UP_PASSES):  # the writers wait only for what is left then
            frames = state[0]
            state = self.checkpoint()
            if state is None:
                return None
            if state[0] - frames <= CAUGHT_UP:
                break
        with self._writers.lock:
            state = self.checkpoint()
        if state is not None and state[0] == state[1]:
            self.restarts += 1
        return None if state is None else state[1]

    def _run(self) -> None:
        interval = self._busy_interval
        backfilled = 0  # frames of the log already copied, as of the last look
        started_over = False  # whether the last look found the log copied to its end
        failing = False
        while True:
            # the pause, or the writes' count (not while failing: then the pause), or stop()
            (self._stop if failing else self._wake).wait(interval)
            if self._stop.is_set():
                return
            self._wake.clear()  # (writes counted during the look wake the next at once)
            if self._intact is not None and not self._intact():
                # The store stops the runtime (its heartbeat finds the same); copy nothing more.
                log.warning("store.checkpoints_stopped", path=str(self.path))
                return
            try:
                copied = self.tick()
            except sqlite3.Error as exc:
                if not failing:  # once per streak, not every tick
                    log.warning("store.checkpoint_failed", path=str(self.path), error=str(exc))
                failing = True
                interval = IDLE_INTERVAL
                continue
            failing = False
            if copied is not None and copied != backfilled:
                self.checkpoints += 1
            interval = next_interval(
                interval,
                copied,
                backfilled,
                started_over=started_over,
                busy_interval=self._busy_interval,
                idle_interval=self._idle_interval,
            )
            if copied is not None:
                backfilled = copied
                last = self.last
                started_over = last is not None and last[0] == last[1]


def next_interval(
    interval: float,
    copied: int | None,
    backfilled: int,
    *,
    started_over: bool,
    busy_interval: float = BUSY_INTERVAL,
    idle_interval: float = IDLE_INTERVAL,
) -> float:
    """Seconds until the next look, after a look that left ``copied`` frames of the log
    in the database file (``None``: another connection was checkpointing) where the look
    before had left ``backfilled`` — and found the log copied to its end
    (``started_over``: the next commit started it over, so every frame now copied is
    new — unless the count is unchanged: no commit came). Soon while the log grows by
    :data:`BUSY_FRAMES` or more a look; the pause doubles up to ``idle_interval`` while
    it grows less or not at all."""
    if copied is None:  # look again soon
        return busy_interval
    # frames added since the last look (all of them, when the log started over since;
    # none when the count is where it was: a log copied to its end that no commit has
    # started over yet is the same log)
    if copied == backfilled:
        moved = 0
    elif started_over or copied < backfilled:
        moved = copied
    else:
        moved = copied - backfilled
    if moved >= BUSY_FRAMES:
        return busy_interval
    return min(idle_interval, interval * 2)
