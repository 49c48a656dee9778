"""Per-call time limits (the server is told to cancel) and results too large to keep."""

from __future__ import annotations

import asyncio

import pytest
from mcp_types import CallToolResult, TextContent
from tools_mcp_kit import runtime_with, stdio_server, wait_for

from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import text, tool_call
from toolang_tools_mcp.results import McpToolError, convert_result


def test_a_call_past_its_time_limit_ends_and_the_server_sees_the_cancellation(
    toolang_runtime, toolang_home, monkeypatch, toolang_scripted_model, tmp_path
):
    model = toolang_scripted_model([tool_call("notes_wait_here", {}), text("done")])
    runtime = runtime_with(
        toolang_runtime,
        toolang_home,
        monkeypatch,
        stdio_server(
            "notes", "files_server.py", str(tmp_path / "ledger"), extra="timeout_seconds = 1"
        ),
        scripted=model.plugin(),
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="go")).id

    async def serve_until_seen() -> None:
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        try:
            while not inbox.get(turn_id).status.is_terminal:
                await asyncio.sleep(0.02)
            # The session stays open while serving: the server's handler sees the cancel.
            await asyncio.to_thread(
                wait_for, "the server to see the cancellation", (tmp_path / "cancelled").exists
            )
        finally:
            stop.set()
            await serving

    asyncio.run(serve_until_seen())
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    (result,) = [s.data["result"] for s in inbox.store.steps(turn_id) if "result" in s.data]
    assert result["ok"] is False
    assert "MCP server 'notes', tool 'wait_here': no answer within 1 s" in result["error"]


def test_a_50_mb_result_is_refused_naming_server_and_tool():
    huge = CallToolResult(content=[TextContent(type="text", text="x" * (50 * 1024 * 1024))])
    with pytest.raises(McpToolError, match=r"MCP server 'big', tool 'dump': the result is over"):
        convert_result("big", "dump", huge, 10 * 1024 * 1024)


def test_text_and_structured_content_go_to_the_model():
    result = CallToolResult(
        content=[TextContent(type="text", text="two lines")], structured_content={"n": 2}
    )
    assert convert_result("s", "t", result, 1000) == {
        "text": "two lines",
        "structured": {"n": 2},
    }


def test_an_error_result_is_a_tool_error_naming_the_server():
    result = CallToolResult(content=[TextContent(type="text", text="no such note")], is_error=True)
    with pytest.raises(McpToolError, match=r"MCP server 's', tool 't' reported an error: no such"):
        convert_result("s", "t", result, 1000)


def test_a_canceled_turn_cancels_the_call_on_the_server(
    toolang_runtime, toolang_home, monkeypatch, toolang_scripted_model, tmp_path
):
    import time

    model = toolang_scripted_model([tool_call("notes_wait_here", {})])  # canceled in it
    runtime = runtime_with(
        toolang_runtime,
        toolang_home,
        monkeypatch,
        stdio_server("notes", "files_server.py", str(tmp_path / "ledger")),
        scripted=model.plugin(),
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:c", input="go")).id

    async def serve_and_cancel() -> None:
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        try:
            while not (tmp_path / "server.pid").exists():  # the server holds the call
                await asyncio.sleep(0.02)
            inbox.store.cancel(turn_id, now=time.time(), reason="canceled by a person")
            while not inbox.get(turn_id).status.is_terminal:
                await asyncio.sleep(0.02)
            await asyncio.to_thread(
                wait_for, "the server to see the cancellation", (tmp_path / "cancelled").exists
            )
        finally:
            stop.set()
            await serving

    asyncio.run(serve_and_cancel())
    assert inbox.get(turn_id).status is TurnStatus.CANCELED
