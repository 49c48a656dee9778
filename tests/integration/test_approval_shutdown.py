"""A turn waiting for a person does not hold a shutdown: `toolang run`, SIGTERMed while a
turn waits for an approval, exits at once (not after `shutdown_grace_seconds`); the
request stays pending, the next runtime waits on it again, and once a person approves,
the tool runs exactly once.

Runs in the tox `integration` env: toolang-hook-approval-gate asks, toolang-tools-operator
provides `fs_write`; the model is the test kit's script-file model.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolang_core.testing import make_distribution
from toolang_core.testing.cli import run_toolang
from toolang_core.testing.processes import start_toolang_run, wait_for, wait_serving

pytestmark = pytest.mark.slow  # real runtimes stopped and started again

GRACE = 8.0
CONFIG = f"""
[runtime]
executor = "agent"
poll_seconds = 0.05
lease_seconds = 3
shutdown_grace_seconds = {GRACE}

[models]
default = "scripted"

[plugins.tools-operator]
workspace = "workspace"
"""
WRITE = {"path": "notes/log.txt", "text": "written once\n", "append": True}


class Home:
    def __init__(self, path: Path, site: Path, script: Path) -> None:
        self.path = path
        self.site = site
        self.env = {"TOOLANG_SCRIPT": str(script)}
        self.runs: list[subprocess.Popen[str]] = []

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_toolang(*args, cwd=self.path, env=self.env, pythonpath=[self.site])

    def json(self, *args: str) -> Any:
        result = self.cli(*args, "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def status_of(self, turn_id: str) -> str:
        return str(self.json("turns", "show", turn_id)["turn"]["status"])

    def start(self) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
        env.update(
            self.env, PYTHONPATH=os.pathsep.join([str(self.site), env.get("PYTHONPATH", "")])
        )
        log = self.path / f"run-{len(self.runs)}.log"
        proc = start_toolang_run(self.path, env, log, "--no-sources")
        self.runs.append(proc)

        def running() -> bool:
            status = self.cli("status", "--json")  # fails until the runtime made its store
            return status.returncode == 0 and bool(json.loads(status.stdout)["runtime_running"])

        wait_serving(proc, log, running)
        return proc


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    site = tmp_path / "site"
    make_distribution(
        site,
        "toolang-test-scripted",
        entry_points={"toolang": {"scripted": "toolang_core.testing.script_file_plugin"}},
    )
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                {"tool_calls": [{"id": "c1", "name": "fs_write", "params": WRITE}]},
                {"text": "the note is written"},
            ]
        )
    )
    served = Home(tmp_path / "home", site, script)
    served.path.mkdir()
    (served.path / "toolang.toml").write_text(CONFIG)
    yield served
    for proc in served.runs:  # whatever a failed test left running
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def pending_request(home: Home, turn_id: str) -> dict[str, Any]:
    wait_for(lambda: home.status_of(turn_id) == "awaiting_approval", 60, "the turn to park")
    (request,) = home.json("approvals", "list")
    assert (request["turn_id"], request["tool"], request["status"]) == (
        turn_id,
        "fs_write",
        "pending",
    )
    return dict(request)


def test_sigterm_hands_a_turn_waiting_for_approval_back_at_once_and_it_resumes(home):
    first = home.start()
    submitted = home.cli("submit", "write the note", "--thread", "chat:park", "--agent", "operator")
    assert submitted.returncode == 0, submitted.stderr
    turn_id = json.loads(submitted.stdout)["id"]
    asked = pending_request(home, turn_id)

    stopping = time.monotonic()
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=60) == 0, (home.path / "run-0.log").read_text()
    took = time.monotonic() - stopping
    assert took < GRACE / 2, f"the runtime took {took:.1f} s to stop (grace {GRACE} s)"

    # Handed back, not ended: queued for the next runtime, its request still pending.
    assert home.status_of(turn_id) == "queued"
    (still,) = home.json("approvals", "list")
    assert (still["id"], still["status"]) == (asked["id"], "pending")
    assert not (home.path / "workspace" / WRITE["path"]).exists()

    second = home.start()
    again = pending_request(home, turn_id)
    assert again["id"] == asked["id"]  # the same request, not a second one
    approved = home.cli("approvals", "approve", asked["id"])
    assert approved.returncode == 0, approved.stderr

    wait_for(
        lambda: home.status_of(turn_id) in ("completed", "failed", "canceled"),
        60,
        "the turn to end",
    )
    shown = home.json("turns", "show", turn_id)
    assert (shown["turn"]["status"], shown["turn"]["output"]) == (
        "completed",
        "the note is written",
    )
    assert (home.path / "workspace" / WRITE["path"]).read_text() == WRITE["text"]  # once
    calls = [s for s in shown["steps"] if s["kind"] == "tool_call"]
    (step,) = calls
    assert [s["stage"] for s in step["data"]["chain"]].count("execute") == 1
    second.send_signal(signal.SIGTERM)
    assert second.wait(timeout=60) == 0, (home.path / "run-1.log").read_text()
