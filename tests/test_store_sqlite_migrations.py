"""A store written before a schema migration keeps every turn, step and thread after it."""

from __future__ import annotations

import sqlite3

import pytest
from sqlite_utils import Database

from toolang_core.store.rows import new_turn_values
from toolang_core.store.sqlite import SQLiteStore, turns
from toolang_core.store.sqlite.schema import migrations
from toolang_core.store.types import NewTurnRequest, SubmitRules, TurnStatus

T0 = 1_800_000_000.0


def old_store(path, stop_before):
    """A store file with the migrations before ``stop_before`` only, as an older toolang
    left it: one running turn with a step on ``chat:1``, one queued behind it, and one
    queued on ``chat:2``. Returns ``(running, behind, other)``."""
    conn = sqlite3.connect(path, isolation_level=None)
    migrations.apply(Database(conn), stop_before=stop_before)
    rules = SubmitRules("chat", 40)
    ids = []
    for n, thread in enumerate(["chat:1", "chat:1", "chat:2"]):
        request = NewTurnRequest(source="chat", thread_id=thread, input=f"turn {n}")
        ids.append(f"turn-{n}")
        values = new_turn_values(request, rules, ids[-1], T0 + n)
        conn.execute(*turns.insert_statement(values, request.meta))
    conn.execute(
        "UPDATE turn_requests SET status = 'running', attempt = 1, lease_owner = 'old-run', "
        "lease_expires = ?, started_at = ? WHERE id = ?",
        (T0 + 60, T0 + 5, ids[0]),
    )
    conn.execute(
        "INSERT INTO turn_steps (turn_id, seq, attempt, kind, status, started_at, finished_at) "
        "VALUES (?, 1, 1, 'echo', 'completed', ?, ?)",
        (ids[0], T0 + 5, T0 + 6),
    )
    conn.close()
    return ids


def test_lean_bookkeeping_migration_keeps_running_turns_heads_and_steps(tmp_path):
    path = tmp_path / "toolang.db"
    running, behind, other = old_store(path, stop_before="m002_lean_bookkeeping")
    store = SQLiteStore(path)
    try:
        assert store.thread("chat:1").running_id == running
        assert store.thread("chat:1").head_id == behind
        assert [s.kind for s in store.steps(running)] == ["echo"]
        assert store.group_load() == {"chat": (1, 2)}
        claimed = store.claim(run_id="new-run", limit=5, now=T0 + 10, lease_seconds=30, caps={})
        assert [t.id for t in claimed] == [other]  # chat:1 is busy with its running turn
        assert store.finish(
            running, run_id="old-run", attempt=1, status=TurnStatus.COMPLETED, now=T0 + 11
        )
        claimed = store.claim(run_id="new-run", limit=5, now=T0 + 12, lease_seconds=30, caps={})
        assert [t.id for t in claimed] == [behind]
        assert store.thread("chat:1").turns == 2
    finally:
        store.close()


def test_the_database_itself_still_refuses_a_second_active_turn_on_a_thread(tmp_path):
    path = tmp_path / "toolang.db"
    running, behind, _other = old_store(path, stop_before="m002_lean_bookkeeping")
    SQLiteStore(path).close()  # applies every later migration
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            conn.execute(
                "UPDATE turn_requests SET status = 'awaiting_approval' WHERE id = ?", (behind,)
            )
        statuses = conn.execute("SELECT id, status FROM turn_requests ORDER BY seq").fetchall()
        assert statuses[:2] == [(running, "running"), (behind, "queued")]
    finally:
        conn.close()
