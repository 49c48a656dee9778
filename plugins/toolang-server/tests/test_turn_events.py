"""Turn events on a turn's SSE stream come from whichever plugin says it reports them
(``toolang_reports_turn_events``): the server names no plugin. A real runtime serving
the server on a free port, the scripted model calling a tool of a plugin that is not
toolang-tools-mcp, which reports its progress on the bus."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx

import toolang_server
from toolang_core import Tool, ToolCallContext, hookimpl
from toolang_core.testing.models import text, tool_call

CONFIG = """
[models]
default = "scripted"
[runtime]
poll_seconds = 0.05
[plugins.server]
enabled = true
port = 0
"""


async def count_to(n: int, context: ToolCallContext) -> str:
    """Count to N, reporting each step as it goes.

    :param n: where to stop
    """
    for step in range(1, n + 1):
        event = context.event("tool.progress", {"progress": step, "total": n})
        await context.runtime.publish(event)
    return f"counted to {n}"


class Counter:
    """A third plugin: a tool that reports its progress, and says so when ``reports``."""

    def __init__(self, *, reports: bool) -> None:
        self.reports = reports

    @hookimpl
    def toolang_register_tools(self, register: Any) -> None:
        register(Tool.from_function(count_to, blocking=False))

    @hookimpl
    def toolang_reports_turn_events(self, runtime: Any) -> tuple[str, ...] | None:
        return ("tool.progress",) if self.reports else None


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


def test_a_plugin_that_reports_turn_events_gets_them_on_the_turns_stream(
    toolang_runtime, toolang_scripted_model
):
    model = toolang_scripted_model([tool_call("count_to", {"n": 3}), text("counted")])
    runtime = toolang_runtime(
        CONFIG,
        plugins={
            "scripted": model.plugin(),
            "server": toolang_server,
            "counter": Counter(reports=True),
        },
    )
    assert runtime.reported_turn_events() == {"tool.progress"}

    def ask(url: str) -> list[tuple[str, Any]]:
        with httpx.Client(base_url=url, timeout=120) as client:
            body = {"input": "count", "thread_id": "http:count", "stream": True}
            with client.stream("POST", "/api/turns", json=body) as response:
                assert response.status_code == 200, response.read()
                return sse_events("".join(response.iter_text()))

    events = asyncio.run(serve_and_ask(runtime, ask))
    assert events[-1][0] == "finished" and events[-1][1]["status"] == "completed", events[-1]
    progress = [data for kind, data in events if kind == "progress"]
    assert [(p["tool"], p["progress"], p["total"]) for p in progress] == [
        ("count_to", 1, 3),
        ("count_to", 2, 3),
        ("count_to", 3, 3),
    ]
    assert len({p["call_id"] for p in progress}) == 1


def test_the_server_listens_to_the_bus_only_when_a_plugin_reports_turn_events(
    toolang_runtime,
):
    for reports, inactive in ((True, ()), (False, ("toolang_on_event",))):
        runtime = toolang_runtime(
            CONFIG, plugins={"server": toolang_server, "counter": Counter(reports=reports)}
        )
        assert toolang_server.toolang_inactive_hooks(runtime) == inactive, reports


def test_a_watcher_attached_while_a_tool_runs_gets_it_started_then_finished(open_server):
    """The stream of a turn whose tool call runs: ``tool_call`` ``started`` (``ok``
    null), then — once the tool returns — ``finished`` with its result; never the
    running call as a failure (the console showed ``ran TOOL: null`` for good)."""
    from server_helpers import wait_for

    from toolang_core.testing.live_server import parse_sse

    with open_server.client() as client:
        turn_id = client.post(
            "/api/turns", json={"input": '/tool gate_wait {"name": "stream-gate"}'}
        ).json()["turn_id"]
        wait_for(
            lambda: any(
                s["status"] == "intent" for s in client.get(f"/api/turns/{turn_id}/steps").json()
            ),
            what="the tool call running",
        )
        with client.stream("GET", f"/api/turns/{turn_id}/events") as stream:
            raw = ""
            chunks = stream.iter_text()
            while "\n\n" not in raw.partition("event: tool_call")[2]:  # a whole event
                raw += next(chunks)
            (started,) = [d for k, d in parse_sse(raw) if k == "tool_call"]
            assert (started["phase"], started["ok"], started["tool"]) == (
                "started",
                None,
                "gate_wait",
            )
            (open_server.home / "out" / "stream-gate").write_text("")
            raw += "".join(chunks)
    calls = [d for k, d in parse_sse(raw) if k == "tool_call"]
    assert [(c["phase"], c["ok"], c["seq"]) for c in calls] == [
        ("started", None, started["seq"]),
        ("finished", True, started["seq"]),
    ]
    assert parse_sse(raw)[-1][0] == "finished"
