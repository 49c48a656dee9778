"""An MCP server's ``notifications/progress`` during a tool call, as turn events: on
the runtime's bus (``tool.progress``), on the turn's SSE stream and in the console's
trace — read from a real runtime serving the server plugin, the progress sent by a
real MCP server (``servers/progress_server.py``), masked."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
from tools_mcp_kit import runtime_with, stdio_server

import toolang_server
from toolang_core import hookimpl
from toolang_core.testing.models import text, tool_call

TOKEN = "ghp_R8mT2vX9qL4wZ7nB3kD6fH1jP5sC0yA2eG4u"  # a GitHub token's shape, not a live one


class Listener:
    """A bus subscriber: what ``toolang_on_event`` delivered."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    @hookimpl
    def toolang_on_event(self, event: Any, runtime: Any) -> None:
        self.events.append(event)


def sse_events(raw: str) -> list[tuple[str, Any]]:
    events = []
    for block in raw.replace("\r\n", "\n").split("\n\n"):
        kind, data = "message", None
        for line in block.splitlines():
            if line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:"):
                data = json.loads(line[5:].strip())
        if data is not None:
            events.append((kind, data))
    return events


async def serve_and_ask(runtime: Any, ask: Any) -> Any:
    """Serve ``runtime`` (its HTTP server on a free port) while ``ask(url)`` runs in a
    thread; stop it after."""
    stop = asyncio.Event()
    serving = asyncio.create_task(runtime.serve(stop, sources=()))
    url_file = runtime.config.home / "server.url"
    deadline = time.monotonic() + 120
    try:
        while not (url_file.is_file() and url_file.read_text().strip()):
            assert not serving.done(), serving
            assert time.monotonic() < deadline, "the server never wrote its URL"
            await asyncio.sleep(0.02)
        return await asyncio.to_thread(ask, url_file.read_text().strip())
    finally:
        stop.set()
        await serving


def test_progress_notifications_are_turn_events_on_the_bus_the_stream_and_the_trace(
    toolang_runtime, toolang_home, monkeypatch, toolang_scripted_model, tmp_path
):
    model = toolang_scripted_model(
        [tool_call("files_count_to", {"n": 3, "secret": TOKEN}), text("counted")]
    )
    listener = Listener()
    runtime = runtime_with(
        toolang_runtime,
        toolang_home,
        monkeypatch,
        stdio_server("files", "progress_server.py")
        + "[plugins.server]\nenabled = true\nport = 0\n",
        scripted=model.plugin(),
        server=toolang_server,
        listener=listener,
    )

    def ask(url: str) -> tuple[list[tuple[str, Any]], str]:
        with httpx.Client(base_url=url, timeout=120) as client:
            body = {"input": "count", "thread_id": "http:count", "stream": True}
            with client.stream("POST", "/api/turns", json=body) as response:
                assert response.status_code == 200, response.read()
                raw = "".join(response.iter_text())
            events = sse_events(raw)
            page = client.get(f"/turns/{events[-1][1]['turn_id']}")
            assert page.status_code == 200, page.text
            return events, page.text

    events, page = asyncio.run(serve_and_ask(runtime, ask))
    assert events[-1][0] == "finished" and events[-1][1]["status"] == "completed", events[-1]
    turn_id = events[-1][1]["turn_id"]

    # The bus: one tool.progress event per notification, with the turn's ids.
    published = [e for e in listener.events if e.kind == "tool.progress"]
    assert [(e.data["progress"], e.data["total"]) for e in published] == [(1, 3), (2, 3), (3, 3)]
    assert {e.turn_id for e in published} == {turn_id}
    assert {e.thread_id for e in published} == {"http:count"}
    assert {(e.data["tool"], e.data["server"]) for e in published} == {("files_count_to", "files")}
    assert published[0].data["message"] == "step 1 of 3"
    assert TOKEN not in published[-1].data["message"]  # the server's text, masked
    assert "step 3 of 3, token " in published[-1].data["message"]

    # The turn's SSE stream: the three, in order, while the call runs: after its
    # tool_call event (sent when the call starts), before the next model call's text.
    kinds = [kind for kind, _ in events]
    progress = [data for kind, data in events if kind == "progress"]
    assert [(p["progress"], p["total"], p["tool"]) for p in progress] == [
        (1, 3, "files_count_to"),
        (2, 3, "files_count_to"),
        (3, 3, "files_count_to"),
    ]
    last = len(kinds) - 1 - kinds[::-1].index("progress")
    assert kinds.index("tool_call") < kinds.index("progress") and last < kinds.index("text"), kinds

    # The console's trace: the progress table.
    assert 'id="progress"' in page and "step 2 of 3" in page
    assert TOKEN not in page
    assert TOKEN not in json.dumps(events)
