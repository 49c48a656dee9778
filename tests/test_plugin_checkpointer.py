"""A plugin database's write-ahead log copied back in a thread (PluginCheckpointer),
so the plugin's commits never checkpoint."""

from __future__ import annotations

import sqlite3
import threading

from checkpoint_helpers import wait_until_copied
from sqlite_utils import Migrations

from toolang_core import PluginCheckpointer, open_plugin_database
from toolang_core.store.sqlite.checkpoint import DEFAULT_PAGES, SAFETY_NET_PAGES


def migrations() -> Migrations:
    m = Migrations("demo-plugin")

    @m()
    def m001_notes(db):
        db["notes"].create({"id": int, "text": str}, pk="id")

    return m


def threads_of(path) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"toolang-checkpoint:{path.name}"]


def pages(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]


def write(conn: sqlite3.Connection, keeper: PluginCheckpointer, rows: int, start: int) -> None:
    """``rows`` commits of about a page each, each under the writers' lock."""
    for n in range(start, start + rows):
        with keeper.lock:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO notes (id, text) VALUES (?, ?)", (n, "x" * 3000))
            conn.execute("COMMIT")


def test_the_thread_copies_the_log_back_and_the_commits_never_checkpoint(tmp_path):
    path = tmp_path / "demo.db"
    db = open_plugin_database(path, migrations())
    keeper = PluginCheckpointer(path)
    keeper.join(db.conn)
    assert pages(db.conn) == DEFAULT_PAGES  # joined before start: SQLite's own size
    keeper.start()
    keeper.start()  # once
    try:
        assert keeper.running
        assert len(threads_of(path)) == 1
        # the writers keep the safety net only: their commits leave the copying to the thread
        assert pages(db.conn) == SAFETY_NET_PAGES
        late = sqlite3.connect(path)
        keeper.join(late)  # a connection opened later takes the size of the moment
        assert pages(late) == SAFETY_NET_PAGES
        late.close()
        # 3,000 commits of a page or two, three times the auto-checkpoint size SQLite
        # would use: after each round of 500 the thread copies the log to its end
        # (however slowly a busy machine lets it run), while the commits' own
        # checkpoints wait for the safety net.
        checkpointer = keeper._thread
        assert checkpointer is not None
        written = 0
        for _ in range(6):
            write(db.conn, keeper, 500, written)
            written += 500
            wait_until_copied(checkpointer)
        assert checkpointer.checkpoints > 0
        assert db.conn.execute("SELECT count(*) FROM notes").fetchone()[0] == written
    finally:
        keeper.stop()
    assert threads_of(path) == []
    assert not keeper.running
    assert pages(db.conn) == DEFAULT_PAGES  # back to SQLite's own checkpoints
    keeper.stop()  # again: nothing to do
    db.conn.close()


def test_a_closed_connection_is_forgotten_and_does_not_stop_the_others(tmp_path):
    path = tmp_path / "demo.db"
    db = open_plugin_database(path, migrations())
    closed = sqlite3.connect(path)
    keeper = PluginCheckpointer(path)
    keeper.join(closed)
    keeper.join(db.conn)
    closed.close()
    keeper.start()  # sets the size on every joined connection: the closed one is skipped
    try:
        assert pages(db.conn) == SAFETY_NET_PAGES
    finally:
        keeper.stop()
    assert keeper._connections == [db.conn]
    db.conn.close()


def test_a_thread_that_cannot_open_the_file_leaves_it_to_sqlite(tmp_path, monkeypatch):
    """The plugin's writes go on with SQLite's own checkpoints; the failure is logged."""
    import structlog.testing

    from toolang_core.store import plugin_db

    def refuse(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(plugin_db, "WalCheckpointer", refuse)
    path = tmp_path / "demo.db"
    db = open_plugin_database(path, migrations())
    keeper = PluginCheckpointer(path)
    keeper.join(db.conn)
    with structlog.testing.capture_logs() as logs:
        assert keeper.start() is False
    assert not keeper.running
    assert pages(db.conn) == DEFAULT_PAGES
    (failed,) = [e for e in logs if e["event"] == "plugin_db.checkpointer_failed"]
    assert failed["path"] == str(path) and "unable to open" in failed["error"]
    write(db.conn, keeper, 3, 0)
    keeper.stop()
    db.conn.close()


def test_close_stops_for_good_and_leaves_the_files_writers(tmp_path):
    """A write racing the plugin's close starts no thread; another checkpointer of the
    file starting or stopping never reaches the closed plugin's connections."""
    path = tmp_path / "demo.db"
    db = open_plugin_database(path, migrations())
    keeper = PluginCheckpointer(path)
    keeper.join(db.conn)
    assert keeper.start()
    keeper.close()
    assert not keeper.running and threads_of(path) == []
    assert keeper.start() is False  # closed: never again
    assert threads_of(path) == []
    late = sqlite3.connect(path)
    keeper.join(late)  # after close: not taken
    assert keeper._connections == []
    db.conn.close()
    other = PluginCheckpointer(path)  # another plugin object on the same file
    other.join(late)
    assert other.start()
    assert keeper not in list(keeper._writers._writers)
    assert pages(late) > DEFAULT_PAGES
    other.close()
    assert pages(late) == DEFAULT_PAGES
    late.close()


def test_two_checkpointers_of_one_file_share_its_writers_lock(tmp_path):
    path = tmp_path / "demo.db"
    first, second = PluginCheckpointer(path), PluginCheckpointer(path)
    assert first.lock is second.lock
    assert first.start() and second.start()
    try:
        assert len(threads_of(path)) == 2  # the one that finds the other copying looks again
    finally:
        first.close()
        second.close()
    assert threads_of(path) == []
