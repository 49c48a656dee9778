"""Approvals across real processes: `toolang run` parks a turn whose model asks for
`fs_write`; `toolang approvals approve|deny` from a second process decides; the turn
completes (or the model is told the denial).

Runs in the tox `integration` env, where every plugin of the repository is installed:
toolang-hook-approval-gate decides, toolang-tools-operator provides `fs_write`, and
whatever other tool-hook plugins are installed take their places in the chain. The model
is the test kit's script-file model, offered by a test distribution on PYTHONPATH.
"""

from __future__ import annotations

import getpass
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from served_home import ServedHome, scripted_site

from toolang_core.testing.processes import wait_for
from toolang_core.testing.runtimes import SCRIPTED_AGENT_CONFIG

CONFIG = (
    SCRIPTED_AGENT_CONFIG
    + """
[plugins.tools-operator]
workspace = "workspace"
"""
)
WRITE = {"path": "notes/approved.txt", "text": "written after a person said yes"}
PRE_STAGES = ("SecurityFilter", "ApprovalGate", "execute")
POST_STAGES = {
    "toolang_observe_tool_result": "LearningObserver",
    "toolang_save_knowledge": "KnowledgeSaver",
    "toolang_publish_event": "EventPublisher",
}
POST_HOOKS = ("toolang_filter_tool_result", *POST_STAGES)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[[list[dict[str, Any]]], ServedHome]]:
    """``serve(script)``: a home whose model follows ``script``, served by `toolang run`."""
    homes: list[ServedHome] = []

    def start(script: list[dict[str, Any]]) -> ServedHome:
        home = ServedHome(tmp_path / "home", scripted_site(tmp_path / "site"), CONFIG, script)
        homes.append(home)
        home.start()
        return home

    yield start
    for home in homes:
        home.stop()


def submit_and_await_approval(home: ServedHome) -> tuple[str, dict[str, Any]]:
    """Submit a turn; wait until it parks; return its id and its one pending request."""
    # The operator owns the file tools (the default assistant delegates instead).
    submitted = home.cli(
        "submit", "please write the notes", "--thread", "chat:e2e", "--agent", "operator"
    )
    assert submitted.returncode == 0, submitted.stderr
    turn_id = json.loads(submitted.stdout)["id"]
    wait_for(
        lambda: home.status_of(turn_id) == "awaiting_approval", 60, "the turn to await approval"
    )
    (request,) = home.json("approvals", "list")
    assert (request["turn_id"], request["tool"], request["status"]) == (
        turn_id,
        "fs_write",
        "pending",
    )
    assert request["params"] == WRITE
    assert (request["thread_id"], request["requester"]) == ("chat:e2e", "owner")
    return turn_id, request


def finished(home: ServedHome, turn_id: str) -> dict[str, Any]:
    wait_for(
        lambda: home.status_of(turn_id) in ("completed", "failed", "canceled"),
        60,
        "the turn to finish",
    )
    return home.turn(turn_id)


def tool_step(shown: dict[str, Any]) -> dict[str, Any]:
    (step,) = [s for s in shown["steps"] if s["kind"] == "tool_call"]
    return dict(step)


def registered_post_plugins(home: ServedHome) -> dict[str, set[str]]:
    """The post-execution hooks' plugins as `toolang hooks --json` reports them."""
    families = home.json("hooks")
    (tool_hooks,) = [f for f in families if f["family"] == "tool-hooks"]
    return {e["hook"]: set(e["plugins"]) for e in tool_hooks["hooks"] if e["hook"] in POST_HOOKS}


def test_approved_from_another_process_the_turn_completes_and_the_file_exists(serve):
    home = serve([{"tool_calls": [{"id": "c1", "name": "fs_write", "params": WRITE}]},
                  {"text": "the notes are written"}])  # fmt: skip
    turn_id, request = submit_and_await_approval(home)

    approved = home.cli("approvals", "approve", request["id"], "--reason", "looks right")
    assert approved.returncode == 0, approved.stderr

    shown = finished(home, turn_id)
    assert (shown["turn"]["status"], shown["turn"]["output"]) == (
        "completed",
        "the notes are written",
    )
    written = home.path / "workspace" / WRITE["path"]
    assert written.read_text() == WRITE["text"]
    chain = tool_step(shown)["data"]["chain"]
    pre = [(s["stage"], s["verdict"], s["plugin"]) for s in chain if s["stage"] in PRE_STAGES]
    assert pre[0][0] == "SecurityFilter"
    assert all(s[1] not in ("block", "error") for s in pre if s[0] == "SecurityFilter")
    assert [s for s in pre if s[0] != "SecurityFilter"] == [
        ("ApprovalGate", "pending", "hook-approval-gate"),
        ("ApprovalGate", "granted", "hook-approval-gate"),
        ("execute", "ok", None),
    ]
    granted = next(s for s in chain if s["verdict"] == "granted")
    assert granted["detail"] == f"approved by cli:{getpass.getuser()}"
    # After execute, every plugin `toolang hooks` reports at a post stage ran, and none
    # failed; with every plugin installed (the integration env), every stage is there.
    after = chain[[s["stage"] for s in chain].index("execute") + 1 :]
    assert [s for s in after if s["verdict"] == "error"] == []
    registered = registered_post_plugins(home)
    for hook, stage in POST_STAGES.items():
        assert registered[hook], f"no plugin at {stage}: is every plugin installed?"
        ran = {s["plugin"] for s in after if s["stage"] == stage and s["verdict"] == "ok"}
        assert ran == registered[hook], stage
    trace = home.cli("turns", "trace", turn_id)
    assert trace.returncode == 0, trace.stderr
    for stage in ("SecurityFilter", "ApprovalGate", "execute", *POST_STAGES.values()):
        assert f"\n{'':16}{stage}" in trace.stdout, stage
    (decided,) = home.json("approvals", "list", "--all")
    assert (decided["status"], decided["decided_by"], decided["reason"]) == (
        "approved",
        f"cli:{getpass.getuser()}",
        "looks right",
    )


def test_denied_from_another_process_the_model_is_told_and_no_file_is_written(serve):
    home = serve([{"tool_calls": [{"id": "c1", "name": "fs_write", "params": WRITE}]},
                  {"text": "understood, I did not write it"}])  # fmt: skip
    turn_id, request = submit_and_await_approval(home)

    denied = home.cli("approvals", "deny", request["id"], "--reason", "not in this folder")
    assert denied.returncode == 0, denied.stderr

    shown = finished(home, turn_id)
    assert (shown["turn"]["status"], shown["turn"]["output"]) == (
        "completed",
        "understood, I did not write it",
    )
    assert not (home.path / "workspace" / WRITE["path"]).exists()
    step = tool_step(shown)
    assert [s["verdict"] for s in step["data"]["chain"] if s["stage"] == "ApprovalGate"] == [
        "pending",
        "denied",
    ]
    assert "execute" not in [s["stage"] for s in step["data"]["chain"]]
    expected = f"cli:{getpass.getuser()} denied fs_write: not in this folder; it was not run"
    model_calls = [s for s in shown["steps"] if s["kind"] == "model_call"]
    told = model_calls[1]["data"]["messages"][-1]
    assert told["role"] == "tool"
    assert json.loads(told["content"]) == {
        "ok": False,
        "error": expected,
        "error_type": "denied",
    }
    again = home.cli("approvals", "approve", request["id"])
    assert again.returncode == 6
    assert f"approval {request['id']} was already denied" in again.stderr
