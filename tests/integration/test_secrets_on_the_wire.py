"""No raw secret on any wire: after a conversation carrying every format of
:mod:`secret_formats` — in the user's messages, in a tool's parameters, in the model's
streamed answers, in a task's title and body — grep the SSE streams, the A2A streams,
every HTTP response body and the exported OpenTelemetry spans for them.

A real `toolang run` with toolang-server on (and toolang-source-a2a,
toolang-source-task and toolang-source-mcp mounting their routes on it), every plugin
of the repository installed (the tox `integration` env) and the test kit's script-file model, which
streams its answers word by word (a card number or an IBAN arrives in four or more
deltas). The SecurityFilter's masking of tool parameters and results is off, so the
raw values reach the tools, their results and the model: what keeps them off the wire
is the one redaction policy alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from secret_formats import SECRET_TEXT, SECRETS, leaks
from served_home import ServedHome, scripted_site

from toolang_core.testing.processes import wait_for
from toolang_core.testing.runtimes import SCRIPTED_AGENT_CONFIG

CONFIG = (
    SCRIPTED_AGENT_CONFIG
    + """
[memory]
plugin = "sqlite"

[plugins.server]
enabled = true
port = 0

[plugins.tools-operator]
workspace = "workspace"

# Every turn traced, with its content (prompts, answers, tool arguments and results).
[plugins.otel]
exporter = "file"
sample_ratio = 1
record_content = true
max_content_chars = 100000

# The MCP endpoint (/api/mcp) offers the scripted agent as the tool ask_chronicler.
[plugins.source-mcp]
agents = ["chronicler"]

# Off: the raw values reach tools, results and the model; only the policy is left.
[plugins.hook-security-filter]
redact_params = false
redact_results = false
"""
)
ANSWER = f"Noted, I will remember: {SECRET_TEXT}"
SAVE_AND_ANSWER = [
    {"tool_calls": [{"id": "c1", "name": "memory_agent_save",
                     "params": {"key": "vault", "content": SECRET_TEXT}}]},
    {"text": ANSWER, "word_delay": 0.01},  # streamed to a watcher already attached
]  # fmt: skip
WRITE_AND_ANSWER = [
    {"tool_calls": [{"id": "w1", "name": "fs_write",
                     "params": {"path": "notes/copy.txt", "text": SECRET_TEXT}}]},
    {"text": ANSWER},
]  # fmt: skip


class Wire:
    """What the test read from the server: every body, every stream, by where from."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.seen: list[tuple[str, str]] = []

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = self.client.request(method, path, **kwargs)
        self.seen.append((f"{method} {path} -> {response.status_code}", response.text))
        return response

    def stream(self, method: str, path: str, **kwargs: Any) -> str:
        with self.client.stream(method, path, **kwargs) as response:
            assert response.status_code == 200, response.read()
            text = "".join(response.iter_text())
        self.seen.append((f"{method} {path} (stream)", text))
        return text

    def leaked(self) -> dict[str, list[str]]:
        return {where: found for where, body in self.seen if (found := leaks(body))}


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


@pytest.fixture
def wire(tmp_path: Path) -> Iterator[tuple[ServedHome, Wire]]:
    site = scripted_site(tmp_path / "site")
    home = ServedHome(tmp_path / "home", site, CONFIG, SAVE_AND_ANSWER)
    (home.path / "workspace" / "notes").mkdir(parents=True)
    try:
        home.start()
        url_file = home.path / ".toolang" / "server.url"
        url = wait_for(lambda: url_file.is_file() and url_file.read_text().strip(), 60, "the URL")
        with httpx.Client(base_url=url, timeout=120) as client:
            yield home, Wire(client)
        home.stop()
    finally:
        home.kill()


def script(home: ServedHome, steps: list[dict[str, Any]]) -> None:
    Path(home.env["TOOLANG_SCRIPT"]).write_text(json.dumps(steps))


class _Tee:
    """An MCP client's HTTP transport that keeps what the server sent, body by body."""

    def __init__(self, seen: list[tuple[str, str]]) -> None:
        import httpx2

        self.seen = seen
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: Any) -> Any:
        import httpx2

        response = await self.inner.handle_async_request(request)
        asked = json.loads(request.content or b"null") or {}
        where = f"MCP #{len(self.seen)} {request.method} {asked.get('method', '')} " + str(
            asked.get("params", {}).get("name", "")
        )
        seen = self.seen
        body = response.stream

        class Kept(httpx2.AsyncByteStream):
            async def __aiter__(self) -> Any:
                got = b""
                try:
                    async for chunk in body:
                        got += chunk
                        yield chunk
                finally:
                    seen.append((f"{where} -> {response.status_code}", got.decode()))

            async def aclose(self) -> None:
                await body.aclose()

        response.stream = Kept()
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> _Tee:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.inner.__aexit__(*exc)


def mcp_conversation(url: Any) -> list[tuple[str, str]]:
    """Calls of ``ask_chronicler`` over /api/mcp whose answers could quote a secret:
    the agent's answer, an echo of the caller's own key, a refused argument; every body
    the server sent, by call."""
    import anyio
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    seen: list[tuple[str, str]] = []

    async def talk() -> None:
        client = httpx2.AsyncClient(transport=_Tee(seen), timeout=120)
        async with (
            client,
            streamable_http_client(f"{url}/api/mcp", http_client=client) as (read, write),
            ClientSession(read, write) as mcp,
        ):
            await mcp.initialize()
            answered = await mcp.call_tool(
                "ask_chronicler",
                {"text": SECRET_TEXT, "thread": "wire",
                 "request_id": f"key {SECRETS['GitHub token']} {SECRETS['Stripe key']}"},
            )  # fmt: skip
            assert not answered.is_error, answered
            text = answered.content[0].text  # type: ignore[union-attr]
            assert "[card redacted]" in text and "[iban redacted]" in text  # masked, not dropped
            assert answered.structured_content["status"] == "completed"  # type: ignore[index]
            # An argument of the wrong type: the SDK's own error may quote what it was.
            refused = await mcp.call_tool(
                "ask_chronicler", {"text": SECRET_TEXT, "thread": [SECRET_TEXT]}
            )
            assert refused.is_error, refused

    anyio.run(talk)
    return seen


def test_no_raw_secret_in_any_stream_or_response_body(wire):
    home, wire = wire
    # 1. Over HTTP, streamed: the secrets in the input, a tool's parameters and the
    #    model's answer, which arrives word by word.
    raw = wire.stream(
        "POST",
        "/api/turns",
        json={"input": SECRET_TEXT, "thread_id": "http:wire", "stream": True,
              "agent": "chronicler"},
    )  # fmt: skip
    events = sse_events(raw)
    assert events[-1][0] == "finished" and events[-1][1]["status"] == "completed", events[-1]
    turn_id = events[-1][1]["turn_id"]
    streamed = "".join(data["delta"] for kind, data in events if kind == "text")
    stored = wire.request("GET", f"/api/turns/{turn_id}").json()["output"]
    assert "[card redacted]" in stored and "[iban redacted]" in stored  # masked, not dropped
    # What streamed joins to what is stored: no extra ":final" delta was needed.
    assert streamed == stored
    assert not [d for kind, d in events if kind == "text" and d["call"].endswith(":final")]
    assert len([kind for kind, _ in events if kind == "text"]) > 5  # it did stream

    # 2. A tool call a person approves over HTTP (its pending parameters on the wire).
    script(home, WRITE_AND_ANSWER)
    submitted = wire.request(
        "POST",
        "/api/turns",
        json={"input": SECRET_TEXT, "thread_id": "http:approve", "agent": "operator"},
    ).json()
    approval = wait_for(
        lambda: wire.request("GET", "/api/approvals", params={"status": "pending"}).json(),
        60,
        "the approval request",
    )[0]
    watched = wire.client.stream("GET", f"/api/turns/{submitted['turn_id']}/events")
    with watched as response:  # attached while it waits, detached after its approval event
        for line in response.iter_lines():
            if line.startswith("event: approval"):
                break
    # Deciding needs a person: the operator, presenting the home's credential.
    operator = (home.path / ".toolang" / "credential").read_text().strip()
    decided = wire.request(
        "POST",
        f"/api/approvals/{approval['id']}/approve",
        json={},
        headers={"Authorization": f"Bearer {operator}"},
    )
    assert decided.status_code == 200, decided.text
    wire.stream("GET", f"/api/turns/{submitted['turn_id']}/events")  # to its end
    assert (home.path / "workspace" / "notes" / "copy.txt").read_text() == SECRET_TEXT

    # 3. Over A2A: streamed, then sent and waited for, then read back.
    script(home, SAVE_AND_ANSWER)
    card = wire.request("GET", "/.well-known/agent-card.json").json()
    endpoint = httpx.URL(card["supportedInterfaces"][0]["url"]).path
    v1 = {"A2A-Version": "1.0"}

    def message(message_id: str) -> dict[str, Any]:
        return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": SECRET_TEXT}]}

    a2a_stream = wire.stream(
        "POST",
        endpoint,
        json={"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
              "params": {"message": message("m1")}},
        headers=v1,
    )  # fmt: skip
    first = sse_events(a2a_stream)[0][1]
    assert "task" in first.get("result", {}), a2a_stream
    streamed_task = first["result"]["task"]
    sent = wire.request(
        "POST",
        endpoint,
        json={"jsonrpc": "2.0", "id": 2, "method": "SendMessage",
              "params": {"message": message("m2")}},
        headers=v1,
    ).json()  # fmt: skip
    a2a_task = sent["result"]["task"]
    for task_id in (streamed_task["id"], a2a_task["id"]):
        wait_for(lambda task_id=task_id: home.status_of(task_id) == "completed", 60, "the A2A turn")
        got = wire.request(
            "POST",
            endpoint,
            json={"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": task_id}},
            headers=v1,
        ).json()
        assert got["result"]["status"]["state"] == "TASK_STATE_COMPLETED", got
    wire.request(
        "POST",
        endpoint,
        json={"jsonrpc": "2.0", "id": 4, "method": "message/send",
              "params": {"message": {"messageId": "m3", "role": "user", "kind": "message",
                                     "parts": [{"kind": "text", "text": SECRET_TEXT}]}}},
    )  # fmt: skip

    # 4. A task handed over by HTTP: its answer echoes what was posted.
    added = wire.request(
        "POST",
        "/api/tasks",
        json={"title": f"rotate {SECRETS['GitHub token']}", "body": SECRET_TEXT},
    )
    assert added.status_code == 200, added.text
    ref = added.json()["ref"]

    # 5. Every GET route of the API, with the ids this conversation made.
    ids = {
        "turn_id": turn_id,
        "thread_id": "http:wire",
        "ref": ref,
        "approval_id": approval["id"],
        "agent": endpoint.rsplit("/", 1)[-1],
        "name": "console.css",
        "sha256": "0" * 64,  # no attachment: a "not found" must not echo a secret either
        "question_id": "q-none",
    }
    document = wire.request("GET", "/api/openapi.json").json()
    for path, operations in document["paths"].items():
        if "get" not in operations or "{run_id}" in path:  # no task run in this one
            continue
        filled = path.format(**ids)
        params = {"q": "aws github stripe"} if path == "/api/memory/search" else None
        if path.endswith("/events"):
            wire.stream("GET", filled)
        else:
            wire.request("GET", filled, params=params)
    wire.request("GET", "/memory", params={"q": SECRET_TEXT[:200]})  # a page that echoes

    assert len(SECRETS) == 25  # 24 formats: the AWS key id and its secret are one pair
    assert len(wire.seen) > 30
    assert wire.leaked() == {}

    # 6. The spans the runtime exported (flushed when it stops), content included.
    home.stop()
    spans = (home.path / ".toolang" / "otel.jsonl").read_text()
    assert "gen_ai.output.messages" in spans and "[card redacted]" in spans
    assert leaks(spans) == []


def test_no_raw_secret_on_the_mcp_wire(wire):
    """The MCP endpoint (/api/mcp), driven by the `mcp` SDK's own client: the agent's
    answer quoting every secret, the caller's own key echoed back, a refused argument —
    every body the server sent, raw, holds none of them."""
    home, wire = wire
    wire.seen += mcp_conversation(wire.client.base_url)
    assert [where for where, _ in wire.seen if "ask_chronicler" in where], wire.seen
    assert wire.leaked() == {}
    home.stop()
