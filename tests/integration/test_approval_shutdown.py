"""A turn waiting for a person does not hold a shutdown: `toolang run`, SIGTERMed while a
turn waits for an approval, exits at once (not after `shutdown_grace_seconds`); the
request stays pending, the next runtime waits on it again, and once a person approves,
the tool runs exactly once.

Runs in the tox `integration` env: toolang-hook-approval-gate asks, toolang-tools-operator
provides `fs_write`; the model is the test kit's script-file model.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from served_home import ServedHome, scripted_site

from toolang_core.testing.processes import wait_for

pytestmark = pytest.mark.slow  # real runtimes stopped and started again

GRACE = 600.0
"""Far longer than any wait below: a runtime that waited for its grace fails the test."""
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


@pytest.fixture
def home(tmp_path: Path) -> Iterator[ServedHome]:
    script = [
        {"tool_calls": [{"id": "c1", "name": "fs_write", "params": WRITE}]},
        {"text": "the note is written"},
    ]
    served = ServedHome(tmp_path / "home", scripted_site(tmp_path / "site"), CONFIG, script)
    yield served
    served.kill()


def pending_request(home: ServedHome, turn_id: str) -> dict[str, Any]:
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

    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=120) == 0, home.log(0)  # not its grace: at once

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
    assert second.wait(timeout=60) == 0, home.log(1)
