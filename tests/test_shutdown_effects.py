"""SIGTERM against a real `toolang run`: a tool call that finishes during the grace period
is recorded and never run again; the turn handed back counts its attempt; a second
signal ends the wait at once, even for a tool blocked in a worker thread."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from kill_helpers import effect_lines, install_effects_kit

from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, SubmitRules, TurnStatus
from toolang_core.testing.processes import wait_for

pytestmark = pytest.mark.slow  # real processes signalled and stopped

CONFIG = """
[runtime]
executor = "agent"
lease_seconds = 30.0
poll_seconds = 0.05
shutdown_grace_seconds = 600.0
max_attempts = 3

[models]
default = "scripted"
"""

SCRIPT = [
    {"tool_calls": [{"id": "a", "name": "append_once", "params": {"label": "a"}}]},
    {"tool_calls": [{"id": "b", "name": "append_idempotent", "params": {"label": "b"}}]},
    {"text": "both done"},
]


def environment(home: Path, site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(
        TOOLANG_LOAD_PLUGINS="scripted,effect-tools",
        TOOLANG_SCRIPT=str(home / "script.json"),
        EFFECT_DIR=str(home),
        PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
    )
    return env


class Runtime:
    """A `toolang run` subprocess whose log lines are collected as they come."""

    def __init__(self, home: Path, env: dict[str, str], *extra: str) -> None:
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "toolang_core",
                *("--log-format", "json", "run", "--no-sources"),
                *extra,
            ],
            cwd=home,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    def logged(self, event: str) -> bool:
        return any(f'"{event}"' in line for line in self.lines)

    def wait(self, timeout: float) -> int:
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=5)
        return code


def step_status(store: SQLiteStore, key: str) -> str | None:
    found = store.find_step(key)
    return found.status if found is not None else None


def test_sigterm_records_a_tool_finishing_in_the_grace_and_a_second_signal_ends_it(tmp_path):
    site = tmp_path / "site"
    install_effects_kit(site)
    home = tmp_path / "home"
    home.mkdir()
    (home / "toolang.toml").write_text(CONFIG)
    (home / "script.json").write_text(json.dumps(SCRIPT))
    (home / "gate-a").touch()  # each tool waits at its gate until the test opens it
    (home / "gate-b").touch()
    env = environment(home, site)
    store = SQLiteStore(home / ".toolang" / "toolang.db")
    turn_id = store.submit(
        NewTurnRequest(source="chat", thread_id="cli:grace", input="do a then b"),
        SubmitRules("chat", 10),
        now=time.time(),
    ).id
    key_a, key_b = f"{turn_id}:tool:a", f"{turn_id}:tool:b"

    first = Runtime(home, env)
    try:
        wait_for(lambda: step_status(store, key_a) == "intent", 60, "tool a to start")
        first.process.send_signal(signal.SIGTERM)
        wait_for(lambda: first.logged("runtime.stopping"), 30, "the first signal's log")
        (home / "gate-a").unlink()  # tool a finishes during the grace period
        wait_for(lambda: step_status(store, key_a) == "completed", 30, "tool a's result")
        wait_for(lambda: step_status(store, key_b) == "intent", 30, "tool b to start")
        # Its intent is written before a worker thread takes the call: a signal in
        # between would leave b never run (in doubt all the same), not blocked.
        wait_for((home / "at-gate-b").exists, 30, "tool b to run in its thread")
        first.process.send_signal(signal.SIGTERM)  # tool b is blocked in its thread
        code = first.wait(timeout=120)  # far less than the grace: the signal ended it
    finally:
        if first.process.poll() is None:
            first.process.kill()
            first.wait(timeout=30)
    log = "".join(first.lines)
    assert code == 0, log
    assert first.logged("runtime.stopping_now"), log
    assert first.logged("runtime.tool_threads_left"), log

    turn = store.get(turn_id)
    assert (turn.status, turn.attempt) == (TurnStatus.QUEUED, 1)  # the attempt is counted
    assert [label for _, label, _ in effect_lines(home / "once.txt")] == ["a"]
    assert effect_lines(home / "idem.txt") == []  # b was still at its gate
    assert (store.find_step(key_a).status, store.find_step(key_a).attempt) == ("completed", 1)

    (home / "gate-b").unlink()
    second = Runtime(home, env, "--until-idle")
    assert second.wait(timeout=120) == 0, "".join(second.lines)

    turn = store.get(turn_id)
    assert (turn.status, turn.output, turn.attempt) == (TurnStatus.COMPLETED, "both done", 2)
    assert [label for _, label, _ in effect_lines(home / "once.txt")] == ["a"]  # not re-run
    assert effect_lines(home / "idem.txt") == [(turn_id, "b", key_b)]
    step_b = store.find_step(key_b)
    assert (step_b.status, step_b.attempt) == ("completed", 2)
    assert step_b.data["in_doubt"]["decision"] == "rerun"
    assert store.find_step(key_a).attempt == 1  # replayed from the store, not re-run
    store.close()
