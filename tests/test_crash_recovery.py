"""Real processes: `toolang run` killed and restarted, cancellation and shutdown from
outside. An audit trigger in the database records every status transition, so "exactly
once" is checked on what really happened, not on the final rows alone."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from kill_helpers import start_kit_runtime

from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import TERMINAL, NewTurnRequest, SubmitRules, TurnStatus
from toolang_core.testing.cli import run_toolang

pytestmark = pytest.mark.slow  # real processes killed mid-turn and restarted

MAX_ATTEMPTS = 5
CONFIG = f"""
[runtime]
executor = "echo"
max_attempts = {MAX_ATTEMPTS}
lease_seconds = 5.0
poll_seconds = 0.05
shutdown_grace_seconds = 0.2

[scheduler]
max_running = 8
"""

AUDIT = """
CREATE TABLE audit (id TEXT, old TEXT, new TEXT, attempt INTEGER, at REAL);
CREATE TRIGGER audit_status AFTER UPDATE OF status ON turn_requests
WHEN old.status != new.status
BEGIN
    INSERT INTO audit VALUES (new.id, old.status, new.status, new.attempt,
                              (julianday('now') - 2440587.5) * 86400.0);
END;
"""

ENV = {"TOOLANG_LOAD_PLUGINS": ""}  # the engine alone: no installed turn sources


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "toolang.toml").write_text(CONFIG)
    store = SQLiteStore(tmp_path / ".toolang" / "toolang.db")
    store.close()
    conn = sqlite3.connect(tmp_path / ".toolang" / "toolang.db")
    conn.executescript(AUDIT)
    conn.close()
    return tmp_path


def start_runtime(home: Path, *extra: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(ENV)
    return start_kit_runtime(home, env, *extra)


def open_store(home: Path) -> SQLiteStore:
    return SQLiteStore(home / ".toolang" / "toolang.db")


def wait_for(predicate, timeout: float, what: str) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.01)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def test_sigkill_and_restart_loses_nothing_and_finishes_nothing_twice(home):
    rng = random.Random(20261122)
    store = open_store(home)
    ids = []
    for i in range(500):
        delay = rng.uniform(0.03, 0.12)
        ids.append(
            store.submit(
                NewTurnRequest(
                    source="chat",
                    thread_id=f"chat:{i % 50}",
                    input=f"turn {i}",
                    meta={"echo": {"delay_seconds": delay}},
                ),
                SubmitRules("chat", 40),
                now=time.time(),
            ).id
        )
    kills = 0
    while kills < 12:
        proc = start_runtime(home)
        # Kill only a runtime that has begun its run (a slow start on a loaded machine
        # would otherwise die before it is recorded, and prove nothing).
        wait_for(
            lambda pid=proc.pid: any(r.pid == pid for r in store.list_runs(limit=3)),
            60,
            f"run {kills + 1} to start",
        )
        time.sleep(rng.uniform(0.2, 0.9))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        kills += 1
    final = start_runtime(home, "--until-idle")
    _out, err = final.communicate(timeout=300)
    assert final.returncode == 0, err

    turns = {t: store.get(t) for t in ids}
    assert all(t.status in TERMINAL for t in turns.values())
    assert all(t.attempt <= MAX_ATTEMPTS for t in turns.values())
    abandoned = [t for t in turns.values() if t.status is TurnStatus.FAILED]
    assert all(t.outcome == "abandoned" for t in abandoned)
    completed = [t for t in turns.values() if t.status is TurnStatus.COMPLETED]
    assert len(completed) + len(abandoned) == 500
    assert all(t.output == t.input for t in completed)

    conn = sqlite3.connect(home / ".toolang" / "toolang.db")
    rows = conn.execute("SELECT id, old, new FROM audit ORDER BY rowid").fetchall()
    terminal = {s.value for s in TERMINAL}
    into_terminal: dict[str, int] = {}
    for turn_id, old, new in rows:
        assert old not in terminal, f"{turn_id} left terminal state {old} for {new}"
        if new in terminal:
            into_terminal[turn_id] = into_terminal.get(turn_id, 0) + 1
    assert into_terminal == dict.fromkeys(ids, 1)
    recovered = conn.execute(
        "SELECT count(DISTINCT id) FROM audit WHERE old = 'running' AND new = 'queued'"
    ).fetchone()[0]
    runs = conn.execute("SELECT status, count(*) FROM runs GROUP BY status").fetchall()
    conn.close()
    store.close()
    assert dict(runs).get("lost", 0) >= 10  # each killed run was found dead at the next start
    assert recovered > 0  # kills really hit running turns, which were requeued


def test_cancel_from_another_process_queued_at_once_running_promptly(home):
    store = open_store(home)
    long_turn = store.submit(
        NewTurnRequest(
            source="chat", thread_id="chat:x", input="long", meta={"echo": {"delay_seconds": 120}}
        ),
        SubmitRules("chat", 40),
        now=time.time(),
    ).id
    waiting = store.submit(
        NewTurnRequest(source="chat", thread_id="chat:x", input="next"),
        SubmitRules("chat", 40),
        now=time.time(),
    ).id
    proc = start_runtime(home)
    try:
        wait_for(lambda: store.get(long_turn).status is TurnStatus.RUNNING, 30, "the long turn")
        result = run_toolang("cancel", waiting, cwd=home, env=ENV)
        assert result.returncode == 0, result.stderr
        assert store.get(waiting).status is TurnStatus.CANCELED  # already, when cancel returned
        started = time.monotonic()
        result = run_toolang("cancel", long_turn, cwd=home, env=ENV)
        assert result.returncode == 0, result.stderr
        assert "canceling" in result.stdout
        wait_for(lambda: store.get(long_turn).status is TurnStatus.CANCELED, 10, "cancellation")
        latency = time.monotonic() - started
        print(f"cross-process cancel of a running turn: {latency * 1000:.0f} ms")
        assert store.get(long_turn).outcome == "canceled"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        store.close()
    assert proc.returncode == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_runtime_with_reason_signal(home, sig):
    store = open_store(home)
    proc = start_runtime(home)
    try:
        wait_for(lambda: any(r.status == "running" for r in store.list_runs(limit=1)), 30, "start")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        store.close()
    assert proc.returncode == 0, err
    stopped = [line for line in err.splitlines() if "runtime.stopped" in line]
    assert stopped, err
    assert "reason=signal" in stopped[0]  # the reason toolang_shutdown received too


def test_sigterm_stops_cleanly_and_hands_running_turns_back(home):
    store = open_store(home)
    turn_id = store.submit(
        NewTurnRequest(
            source="chat", thread_id="chat:y", input="slow", meta={"echo": {"delay_seconds": 120}}
        ),
        SubmitRules("chat", 40),
        now=time.time(),
    ).id
    proc = start_runtime(home)
    try:
        wait_for(lambda: store.get(turn_id).status is TurnStatus.RUNNING, 30, "the turn")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    turn = store.get(turn_id)
    # handed back with its attempt counted, as a crash would: the attempt bound holds
    assert (turn.status, turn.attempt) == (TurnStatus.QUEUED, 1)
    (last_run,) = store.list_runs(limit=1)
    assert last_run.status == "stopped"
    store.close()
