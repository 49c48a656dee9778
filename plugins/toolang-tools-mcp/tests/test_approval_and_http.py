"""A destructive tool waits for a person, then runs once; a streamable-HTTP server."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time

import pytest
from tools_mcp_kit import SERVERS, runtime_with, stdio_server

from toolang_core import hookimpl
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.approvals import ask_a_person
from toolang_core.testing.models import text, tool_call
from toolang_core.tools.approvals import ApprovalBook


class AskWhenAsked:
    """An approval gate that asks a person only when a security filter said so."""

    @hookimpl
    def toolang_approve_tool_call(self, call, ctx):
        if ctx.approvals_asked:
            return ask_a_person(call, ctx, prompt=f"run {call.name}?", requester="tester")
        return None


async def serve_until_done(runtime, turn_id, on_waiting):
    inbox = runtime.open_inbox()
    stop = asyncio.Event()
    serving = asyncio.create_task(runtime.serve(stop, sources=()))
    book = ApprovalBook(inbox.store)
    decided = False
    try:
        while not (turn := inbox.get(turn_id)).status.is_terminal:
            if turn.status is TurnStatus.AWAITING_APPROVAL and not decided:
                (pending,) = book.list("pending")
                on_waiting(book, pending)
                decided = True
            await asyncio.sleep(0.02)
        return turn
    finally:
        stop.set()
        await serving


def test_a_destructive_tool_waits_for_approval_then_runs_once(
    toolang_runtime, toolang_home, monkeypatch, toolang_scripted_model, tmp_path
):
    ledger = tmp_path / "ledger"
    model = toolang_scripted_model([tool_call("notes_delete_note", {"name": "old"}), text("done")])
    runtime = runtime_with(
        toolang_runtime,
        toolang_home,
        monkeypatch,
        stdio_server("notes", "files_server.py", str(ledger)),
        scripted=model.plugin(),
        gate=AskWhenAsked(),
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:a", input="go")).id

    def approve(book, pending):
        assert pending.tool == "notes_delete_note"
        assert not ledger.exists()  # nothing ran before a person decided
        book.decide(pending.id, approved=True, by="alice")

    turn = asyncio.run(serve_until_done(runtime, turn_id, approve))
    assert turn.status is TurnStatus.COMPLETED
    assert ledger.read_text() == "deleted old\n"  # once


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server(tmp_path):
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            str(SERVERS / "files_server.py"),
            str(tmp_path / "ledger"),
            "http",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, "the HTTP MCP server exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "the HTTP MCP server never listened"
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp"
    process.kill()
    process.wait()


def test_an_agent_calls_a_tool_of_a_streamable_http_server_whose_token_stays_secret(
    toolang_runtime, toolang_home, monkeypatch, toolang_scripted_model, http_server
):
    token = "mcp-bearer-8c1d0f5e2b7a"
    monkeypatch.setenv("NOTES_TOKEN", token)
    model = toolang_scripted_model([tool_call("web_read_note", {"name": "x"}), text("done")])
    runtime = runtime_with(
        toolang_runtime,
        toolang_home,
        monkeypatch,
        f'[plugins.tools-mcp.servers.web]\nurl = "{http_server}"\nbearer_env = "NOTES_TOKEN"\n'
        'prefix = "web_"\n',
        scripted=model.plugin(),
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:h", input="go")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    (result,) = [s.data["result"] for s in inbox.store.steps(turn_id) if "result" in s.data]
    assert result["ok"] is True, result
    assert result["output"]["text"] == "note x: hello"
    inbox.store.close()
    for path in toolang_home.path.rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path
