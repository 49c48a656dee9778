"""The runtime owning an SQLite store checkpoints its WAL in the background."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time

from checkpoint_helpers import wait_until_copied

from toolang_core.store.sqlite import SQLiteStore, checkpoint
from toolang_core.store.sqlite.checkpoint import (
    BUSY_FRAMES,
    BUSY_INTERVAL,
    DEFAULT_PAGES,
    IDLE_INTERVAL,
    IDLE_LOOKS,
    RESTART_AT,
    SAFETY_NET_PAGES,
    WalCheckpointer,
    local_writers,
    next_interval,
)
from toolang_core.store.types import NewTurnRequest, SubmitRules, TurnFilter

RULES = SubmitRules(thread_group="chat", priority=0)


def submit(store: SQLiteStore, n: int) -> None:
    for i in range(n):
        store.submit(
            NewTurnRequest(source="chat", thread_id=f"chat:{i % 50}", input=f"turn {i}"),
            RULES,
            now=time.time(),
        )


def wal_state(path) -> tuple[int, int]:
    """(frames in the log, frames of it already copied), seen from another connection."""
    conn = sqlite3.connect(path)
    try:
        _, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return frames, copied
    finally:
        conn.close()


def checkpoint_threads() -> list[threading.Thread]:
    """The store's checkpointer threads (the tests' stores are all ``toolang.db``; a
    plugin's thread is named after its own file)."""
    return [t for t in threading.enumerate() if t.name == "toolang-checkpoint:toolang.db"]


ROUND = 300
"""Submits between two looks at the checkpointer: 1,300-1,450 frames of log (4-5 pages
a submit)."""


def test_the_owner_keeps_the_log_short_without_checkpointing_in_its_commits(tmp_path):
    path = tmp_path / "toolang.db"
    store = SQLiteStore(path)
    store.acquire("run-1")
    try:
        page = store._conn.execute("PRAGMA page_size").fetchone()[0]
        assert store._conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == (SAFETY_NET_PAGES)
        checkpointer = store._checkpointer
        assert checkpointer is not None
        # 10 rounds, ~14,000 frames written in all. The submits wait between rounds for
        # the thread to copy the log to its end, so what the log can reach depends on
        # the work done, not on how much CPU the thread got: at most the rest of one
        # round after the log started over, plus the next round. On a quiet machine the
        # thread copies the end under the writers' lock; on a busy one, where the writes
        # are slow, a passive checkpoint often catches up first. Either way the log
        # starts over, and the commits (whose own checkpoints wait for SAFETY_NET_PAGES,
        # more than two rounds) never checkpoint.
        for _ in range(10):
            submit(store, ROUND)
            wait_until_copied(checkpointer)
        assert checkpointer.checkpoints > 0
        # The log was copied back and restarted as it went: far below what was written,
        # and never as long as the commits' own checkpoints would have let it grow. (A
        # restart can come a round late: a checkpoint of the thread's still under way
        # when the next round's first commit comes keeps the log going; on a quiet
        # machine it stays within two rounds.)
        wal = path.with_name(path.name + "-wal")
        assert wal.stat().st_size < SAFETY_NET_PAGES * (page + 24)  # 24: a frame's header
    finally:
        store.close()
    assert checkpoint_threads() == []  # closing the store stops its thread


def test_a_long_log_is_copied_to_its_end_with_the_writers_held_off(tmp_path):
    """The copy that lets the log start over under a steady stream of commits (which
    passive checkpoints never catch up with): once the log is past RESTART_AT frames,
    the last pass holds this process's writers off."""
    path = tmp_path / "toolang.db"
    store = SQLiteStore(path)  # not acquired: no thread; the test runs the ticks
    checkpointer = WalCheckpointer(path, synchronous="normal")
    writers = local_writers(path)
    writers.checkpointing(True)  # what start() does besides starting the thread
    try:
        submit(store, 50)
        frames = checkpointer.checkpoint()[0]
        assert 0 < frames <= RESTART_AT
        checkpointer.tick()  # a short log: copied, without holding anybody off
        assert checkpointer.restarts == 0
        submit(store, ROUND)
        assert checkpointer.checkpoint()[0] > RESTART_AT
        checkpointer.tick()  # restarts counts only the copy under the writers' lock
        assert checkpointer.restarts == 1
        assert checkpointer.last[0] == checkpointer.last[1]
        submit(store, 1)  # the next commit starts the log over from its beginning
        assert wal_state(path)[0] < 10
    finally:
        writers.checkpointing(False)
        checkpointer.stop()
        store.close()


def autocheckpoint(store: SQLiteStore) -> int:
    return store._conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]


def test_other_connections_of_the_runtimes_process_leave_checkpoints_to_its_thread(tmp_path):
    path = tmp_path / "toolang.db"
    early = SQLiteStore(path)  # e.g. an inbox opened before the runtime starts
    assert autocheckpoint(early) == DEFAULT_PAGES
    owner = SQLiteStore(path)
    owner.acquire("run-1")
    late = SQLiteStore(path)
    try:
        assert autocheckpoint(early) == autocheckpoint(late) == SAFETY_NET_PAGES
        assert len(checkpoint_threads()) == 1
    finally:
        owner.close()
    try:  # the thread is gone: SQLite's own checkpoints again
        assert autocheckpoint(early) == autocheckpoint(late) == DEFAULT_PAGES
    finally:
        early.close()
        late.close()


def test_a_store_in_another_process_leaves_checkpoints_to_sqlite(tmp_path):
    path = tmp_path / "toolang.db"
    owner = SQLiteStore(path)
    owner.acquire("run-1")
    reader = SQLiteStore(path, read_only=True)
    client = (  # e.g. `toolang chat --no-wait`
        "import sys, time\n"
        "from pathlib import Path\n"
        "from toolang_core.store.sqlite import SQLiteStore\n"
        "from toolang_core.store.types import NewTurnRequest, SubmitRules\n"
        "store = SQLiteStore(Path(sys.argv[1]))\n"
        "print(store._conn.execute('PRAGMA wal_autocheckpoint').fetchone()[0])\n"
        "rules = SubmitRules(thread_group='chat', priority=0)\n"
        "for i in range(200):\n"
        "    store.submit(NewTurnRequest(source='chat', thread_id=f'chat:{i % 50}',"
        " input=f'turn {i}'), rules, now=time.time())\n"
        "store.close()\n"
    )
    try:
        assert reader._checkpointer is None
        done = subprocess.run(
            [sys.executable, "-c", client, str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert done.stdout.strip() == str(DEFAULT_PAGES)
        deadline = time.monotonic() + 10
        while (state := wal_state(path))[0] != state[1] and time.monotonic() < deadline:
            time.sleep(0.02)
        frames, copied = wal_state(path)
        assert frames == copied  # everything the client wrote is in the main file
        assert len(reader.list_turns(TurnFilter(limit=1000))) == 200
    finally:
        reader.close()
        owner.close()
    assert checkpoint_threads() == []


def test_a_forked_child_can_open_the_store_while_the_parent_holds_the_writers_lock(tmp_path):
    """The checkpointer holds the lock this process's writers share for its last pass;
    a child forked at that moment must not inherit it held (opening the store would wait
    for a thread that does not exist there)."""
    import os
    import signal

    from toolang_core.store.sqlite.checkpoint import local_writers

    path = tmp_path / "toolang.db"
    parent = SQLiteStore(path)
    held, release = threading.Event(), threading.Event()

    def like_the_checkpointer() -> None:
        with local_writers(path).lock:
            held.set()
            release.wait()

    holder = threading.Thread(target=like_the_checkpointer, daemon=True)
    holder.start()
    held.wait(10)
    pid = os.fork()
    if pid == 0:  # the child: open and write, or be killed by the alarm
        code = 1
        try:
            signal.alarm(10)
            child = SQLiteStore(path)
            submit(child, 1)
            child.close()
            code = 0
        finally:
            os._exit(code)
    release.set()
    holder.join(10)
    _, status = os.waitpid(pid, 0)
    parent.close()
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


def test_the_looks_come_soon_while_the_log_grows_and_slow_down_while_it_trickles():
    """next_interval: what the thread waits after each look (no clock involved)."""
    busy = 0.01
    # another connection is checkpointing: look again soon
    assert next_interval(0.2, None, 500, started_over=False, busy_interval=busy) == busy
    # the log grew by BUSY_FRAMES or more since the last look
    assert next_interval(0.2, 500 + BUSY_FRAMES, 500, started_over=False) == BUSY_INTERVAL
    # a trickle, or nothing: the pause doubles up to IDLE_INTERVAL
    assert next_interval(busy, 510, 500, started_over=False, busy_interval=busy) == 2 * busy
    assert next_interval(0.4, 500, 500, started_over=False) == IDLE_INTERVAL
    # the log started over since the last look: every frame copied now is new, even
    # when more were copied before
    assert next_interval(0.4, 900, 500, started_over=True, busy_interval=busy) == busy
    assert next_interval(0.4, 100, 500, started_over=True, busy_interval=busy) == busy
    # copied to its end, and no commit since (the same count): nothing moved
    assert next_interval(0.1, 500, 500, started_over=True, busy_interval=busy) == 0.2
    assert next_interval(0.4, 300, 500, started_over=False, busy_interval=busy) == busy
    assert next_interval(0.4, 10, 500, started_over=False) == IDLE_INTERVAL
    # up to the longest pause given
    quiet = dict(started_over=False, busy_interval=busy, idle_interval=10 * busy)
    assert next_interval(0.08, 500, 500, **quiet) == 10 * busy
    assert next_interval(10 * busy, 500, 500, **quiet) == 10 * busy


def test_the_writes_wake_the_checkpointer_whatever_its_pause(tmp_path, monkeypatch):
    """Every WRITES_PER_LOOK writes held in ``writing`` (the store's) have the thread
    look at once: a burst of small commits is looked at by how much it writes, not after
    the pause — and only then: the count starts again after each wake."""
    monkeypatch.setattr(checkpoint, "WRITES_PER_LOOK", 20)
    path = tmp_path / "toolang.db"
    store = SQLiteStore(path)  # a writer of the file: it holds ``writing`` around each write
    writers = local_writers(path)
    assert store._hold is writers.writing
    hour = 3600.0
    thread = WalCheckpointer(path, synchronous="normal", busy_interval=hour, idle_interval=hour)
    thread.start()
    deadline = time.monotonic() + 30

    def looked_after(looks: int) -> int:
        while thread.looks == looks:
            assert time.monotonic() < deadline, "the writes did not wake the checkpointer"
            time.sleep(0.005)
        time.sleep(0.05)  # (a look after the first would come now)
        return thread.looks

    try:
        submit(store, 19)
        time.sleep(0.05)  # (were a look due, it would come now)
        assert thread.looks == 0  # an hour's pause, and one write short
        submit(store, 1)
        looks = looked_after(0)
        assert looks == 1 and thread.last is not None and thread.last[1] > 0
        submit(store, 19)  # the count started again: no look
        time.sleep(0.05)
        assert thread.looks == looks
        submit(store, 1)
        assert looked_after(looks) == looks + 1
        # What holds ``lock`` alone (a plugin's writes, the thread's last copy) is not counted.
        counted = writers.writing.count
        with writers.lock:
            pass
        assert writers.writing.count == counted
    finally:
        thread.stop()
        store.close()
    assert thread._wake not in writers.writing.wakes  # stopped: the writes no longer reach it


def test_the_stores_checkpointer_looks_every_busy_interval_even_after_a_quiet_while(tmp_path):
    """Writes the count does not weigh — a few large transactions, a plugin's tables in
    the store's file holding ``lock`` alone — are looked at within BUSY_INTERVAL of
    their start, however long nothing was written before (a plugin's thread pauses
    longer: IDLE_LOOKS busy intervals)."""
    store = SQLiteStore(tmp_path / "toolang.db")
    store.acquire("run-1")
    try:
        thread = store._checkpointer
        assert thread is not None
        assert thread._idle_interval == BUSY_INTERVAL
        quiet = dict(started_over=False, busy_interval=BUSY_INTERVAL)
        assert next_interval(BUSY_INTERVAL, 500, 500, **quiet, idle_interval=BUSY_INTERVAL) == (
            BUSY_INTERVAL
        )
    finally:
        store.close()
    plugin = WalCheckpointer(tmp_path / "plugin.db", synchronous="normal", busy_interval=0.02)
    try:
        assert plugin._idle_interval == IDLE_LOOKS * 0.02
    finally:
        plugin.stop()
