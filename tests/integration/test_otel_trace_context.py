"""One trace across processes: W3C trace context over A2A and over the HTTP API.

Two real `toolang run` processes, A and B, each with its own store and toolang-otel
writing its spans to a JSON-lines file. A's agent asks B's agent (a remote agent, over
A2A); B's turn span must carry A's trace id and have A's model-call span as its parent.
And a third runtime serving the HTTP API parents a submitted turn's span on the
``traceparent`` header the submitter sent.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from toolang_core import NewTurnRequest, TurnFilter, TurnStatus
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import SubmitRules
from toolang_core.testing.dists import make_distribution
from toolang_core.testing.processes import (
    free_port,
    start_toolang_run,
    wait_for,
    wait_serving,
)

MODEL_MODULE = """
from toolang_core import hookimpl, ToolCall
from toolang_core.models.types import ModelResponse


class Scripted:
    async def complete(self, request):
        last = request.messages[-1]
        if last.role == "tool":
            return ModelResponse(text="remote said: " + last.content, model="scripted")
        text = next(m.content for m in reversed(request.messages) if m.role == "user")
        if text.startswith("ask:"):
            _, agent, ask = text.split(":", 2)
            call = ToolCall("c1", "ask_agent", {"agent": agent, "request": ask})
            return ModelResponse(tool_calls=(call,), model="scripted")
        return ModelResponse(text="echo: " + text, model="scripted")


class Provider:
    def model(self, model_id):
        return Scripted()


@hookimpl
def toolang_register_models(register):
    register("scripted", lambda context: Provider(), description="scripted (tests)")
"""

BASE = """
[runtime]
executor = "agent"
poll_seconds = 0.02
shutdown_grace_seconds = 0.2

[models]
default = "scripted"

[plugins.otel]
exporter = "file"
path = "spans.jsonl"
sample_ratio = 1.0
schedule_delay_ms = 50
"""

B_CONFIG = """
[agents]
default = "reviewer"
instruction = "You review things."

[plugins.source-a2a]
listen = "127.0.0.1:{port}"
tokens = { peer-a = "token-of-a" }
"""

A_CONFIG = """
[plugins.agents-remote]
endpoints = ["{endpoint}"]
tokens = {{ "{endpoint}" = "token-of-a" }}
poll_seconds = 0.02

[plugins.source-a2a]
listen = "127.0.0.1:{{port}}"
"""

SERVER_CONFIG = """
[plugins.server]
enabled = true
port = 0
"""


class Run:
    """One `toolang run` in its own home with the given plugins."""

    def __init__(self, home: Path, site: Path, config: str, plugins: str) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        home.mkdir(parents=True)
        (home / "toolang.toml").write_text(BASE + config.replace("{port}", str(self.port)))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
        self.env["TOOLANG_LOAD_PLUGINS"] = plugins
        self.env["PYTHONPATH"] = os.pathsep.join([str(site), self.env.get("PYTHONPATH", "")])
        self.process: subprocess.Popen[str] | None = None
        self.log = home / "run.log"

    def start(self, ready: Callable[[], bool]) -> Run:
        self.process = start_toolang_run(self.home, self.env, self.log)
        wait_serving(self.process, self.log, ready, what=f"toolang run in {self.home}")
        return self

    def serves_a2a(self) -> bool:
        try:
            return httpx.get(self.url + "/.well-known/agent-card.json", timeout=1).is_success
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        """SIGTERM: the otel plugin flushes its spans at shutdown."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)

    def store(self) -> SQLiteStore:
        return SQLiteStore(self.home / ".toolang" / "toolang.db")

    def spans(self) -> list[dict[str, Any]]:
        lines = (self.home / ".toolang" / "spans.jsonl").read_text().splitlines()
        return [s for s in map(json.loads, lines) if "context" in s]


def turn_span(spans: list[dict[str, Any]], turn_id: str) -> dict[str, Any]:
    (found,) = [s for s in spans if s["attributes"].get("toolang.turn.id") == turn_id]
    return found


@pytest.fixture
def site(tmp_path: Path) -> Path:
    make_distribution(
        tmp_path / "site",
        "toolang-otel-test-kit",
        entry_points={"toolang": {"scripted-model": "otel_scripted_model"}},
        modules={"otel_scripted_model": MODEL_MODULE},
    )
    return tmp_path / "site"


def test_a_remote_agents_turn_continues_the_callers_trace(tmp_path: Path, site: Path) -> None:
    b = Run(tmp_path / "b", site, B_CONFIG, "source-a2a,scripted-model,otel")
    endpoint = f"{b.url}/a2a/reviewer"
    a = Run(
        tmp_path / "a",
        site,
        A_CONFIG.format(endpoint=endpoint),
        "agents-remote,source-a2a,scripted-model,source-chat,otel",
    )
    try:
        b.start(b.serves_a2a)
        a.start(a.serves_a2a)
        store = a.store()
        asked = store.submit(
            NewTurnRequest(source="chat", thread_id="cli:ask", input="ask:reviewer:check it"),
            SubmitRules("chat", 10),
            now=time.time(),
        ).id

        def a_finished() -> bool:
            turn = store.get(asked)
            return turn is not None and turn.status.is_terminal

        wait_for(a_finished, 60, "A's ask_agent turn")
        turn = store.get(asked)
        store.close()
        assert turn is not None and turn.status is TurnStatus.COMPLETED, turn
        assert "echo: check it" in (turn.output or "")
    finally:
        a.stop()
        b.stop()

    b_store = b.store()
    (b_turn,) = b_store.list_turns(TurnFilter(limit=10))
    b_store.close()
    assert b_turn.meta["trace_context"]["traceparent"].startswith("00-")

    a_spans, b_spans = a.spans(), b.spans()
    a_root = turn_span(a_spans, asked)
    trace_id = a_root["context"]["trace_id"]
    assert a_root["parent_id"] is None
    b_root = turn_span(b_spans, b_turn.id)
    assert b_root["context"]["trace_id"] == trace_id
    assert b_root["attributes"]["toolang.turn.remote_parent"] is True
    # B's turn hangs under the span of A's model call that sent the message: the call
    # of the remote agent's "model" a2a/<endpoint>, inside A's turn.
    a_by_id = {s["context"]["span_id"]: s for s in a_spans}
    parent = a_by_id[b_root["parent_id"]]
    assert parent["name"] == f"chat {endpoint}"
    assert parent["attributes"]["gen_ai.provider.name"] == "a2a"
    assert parent["parent_id"] == a_root["context"]["span_id"]
    # and B's own steps are B's turn's children, in the same trace
    (b_chat,) = [s for s in b_spans if s["name"].startswith("chat ")]
    assert b_chat["context"]["trace_id"] == trace_id
    assert b_chat["parent_id"] == b_root["context"]["span_id"]


def test_a_turn_submitted_over_http_continues_the_submitters_trace(
    tmp_path: Path, site: Path
) -> None:
    server = Run(tmp_path / "s", site, SERVER_CONFIG, "server,scripted-model,source-chat,otel")
    url_file = server.home / ".toolang" / "server.url"
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    try:
        server.start(url_file.is_file)
        with httpx.Client(base_url=url_file.read_text().strip(), timeout=30) as client:

            def submit(text: str, headers: dict[str, str]) -> str:
                sent = client.post("/api/turns", json={"input": text, "wait": 20}, headers=headers)
                assert sent.status_code == 200, sent.text
                return str(sent.json()["id"])

            traced = submit(
                "traced",
                {"traceparent": f"00-{trace_id}-{parent_id}-01", "tracestate": "vendor=abc"},
            )
            malformed = submit("malformed", {"traceparent": f"00-{trace_id}-{'0' * 16}-01"})
            unsampled = submit("unsampled", {"traceparent": f"00-{trace_id}-{parent_id}-00"})
    finally:
        server.stop()

    spans = server.spans()
    span = turn_span(spans, traced)
    assert span["context"]["trace_id"] == "0x" + trace_id
    assert span["parent_id"] == "0x" + parent_id
    assert "{key=vendor, value=abc}" in span["context"]["trace_state"]  # the SDK's text
    # an all-zero parent id is no trace context: the turn starts a trace of its own
    other = turn_span(spans, malformed)
    assert other["parent_id"] is None and other["context"]["trace_id"] != "0x" + trace_id
    # the caller did not record its trace: neither does this runtime
    assert not [s for s in spans if s["attributes"].get("toolang.turn.id") == unsampled]
