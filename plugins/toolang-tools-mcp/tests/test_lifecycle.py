"""A server that dies mid-call, and a runtime that is stopped."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from tools_mcp_kit import alive, runtime_with, server_pid, stdio_server

from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import text, tool_call


async def serve_killing_the_server(runtime, turn_id, pid_file: Path) -> list[int]:
    inbox = runtime.open_inbox()
    stop = asyncio.Event()
    serving = asyncio.create_task(runtime.serve(stop, sources=()))
    killed = []
    try:
        while not inbox.get(turn_id).status.is_terminal:
            if not killed and pid_file.exists() and pid_file.read_text():
                pid = server_pid(pid_file)  # its id here, not in its sandbox
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            await asyncio.sleep(0.02)
        return killed
    finally:
        stop.set()
        await serving


def test_a_server_killed_mid_call_is_a_clear_error_and_the_next_call_works(
    toolang_runtime, toolang_home, monkeypatch, toolang_scripted_model, tmp_path
):
    model = toolang_scripted_model(
        [
            tool_call("notes_wait_here", {}),
            tool_call("notes_read_note", {"name": "after"}, call_id="c2"),
            text("done"),
        ]
    )
    runtime = runtime_with(
        toolang_runtime,
        toolang_home,
        monkeypatch,
        stdio_server("notes", "files_server.py", str(tmp_path / "ledger")),
        scripted=model.plugin(),
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:k", input="go")).id
    (killed,) = asyncio.run(serve_killing_the_server(runtime, turn_id, tmp_path / "server.pid"))
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    cut, after = [s.data["result"] for s in inbox.store.steps(turn_id) if "result" in s.data]
    assert cut["ok"] is False
    assert "MCP server 'notes', tool 'wait_here'" in cut["error"]
    assert after["ok"] is True, after
    assert after["output"]["text"] == "note after: hello"  # a new server answered
    deadline = time.monotonic() + 60
    while alive(killed):
        assert time.monotonic() < deadline
        time.sleep(0.02)
