"""Real MCP servers' tools, called by an agent through the whole chain."""

from __future__ import annotations

import asyncio

from tools_mcp_kit import runtime_with, stdio_server

from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import text, tool_call


def run_one_turn(runtime):
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="go")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    return inbox, turn_id


def results(inbox, turn_id):
    return [s.data["result"] for s in inbox.store.steps(turn_id) if "result" in s.data]


def test_tools_are_registered_with_prefix_owner_and_annotation_effects(
    toolang_runtime, toolang_home, monkeypatch, tmp_path
):
    runtime = runtime_with(
        toolang_runtime,
        toolang_home,
        monkeypatch,
        stdio_server(
            "notes", "files_server.py", str(tmp_path / "ledger"), extra='owner = "operator"'
        ),
    )
    tools = {n: r.tool for n, r in runtime.components.tools.items() if r.plugin == "tools-mcp"}
    assert sorted(tools) == [
        "notes_append_note",
        "notes_delete_note",
        "notes_hold",
        "notes_read_note",
        "notes_wait_here",
    ]
    assert tools["notes_read_note"].idempotent is True  # readOnlyHint
    assert tools["notes_delete_note"].idempotent is False
    assert tools["notes_append_note"].idempotent is False  # no annotation: in doubt after a crash
    assert {t.owner for t in tools.values()} == {"operator"}
    assert tools["notes_read_note"].parameters["required"] == ["name"]


def test_an_agent_calls_a_read_only_tool(
    toolang_runtime, toolang_home, monkeypatch, toolang_scripted_model, tmp_path
):
    model = toolang_scripted_model([tool_call("notes_read_note", {"name": "todo"}), text("done")])
    runtime = runtime_with(
        toolang_runtime,
        toolang_home,
        monkeypatch,
        stdio_server("notes", "files_server.py", str(tmp_path / "ledger")),
        scripted=model.plugin(),
    )
    inbox, turn_id = run_one_turn(runtime)
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    (result,) = results(inbox, turn_id)
    assert result["ok"] is True, result
    assert result["output"]["text"] == "note todo: hello"
    assert result["output"]["structured"] == {"result": "note todo: hello"}


def test_a_destructive_tool_is_not_run_unattended(
    toolang_runtime, toolang_home, monkeypatch, toolang_scripted_model, tmp_path
):
    """No approval gate installed: nobody can ask, so the destructive call never runs."""
    ledger = tmp_path / "ledger"
    model = toolang_scripted_model([tool_call("notes_delete_note", {"name": "todo"}), text("done")])
    runtime = runtime_with(
        toolang_runtime,
        toolang_home,
        monkeypatch,
        stdio_server("notes", "files_server.py", str(ledger)),
        scripted=model.plugin(),
    )
    inbox, turn_id = run_one_turn(runtime)
    (result,) = results(inbox, turn_id)
    assert (result["ok"], result["error_type"]) == (False, "denied")
    assert "tools-mcp:notes" in result["error"]
    assert not ledger.exists()
