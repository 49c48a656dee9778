"""The doors from any node: two `toolang run` processes share one PostgreSQL store; node
B serves the HTTP API (with its SSE streams), A2A and MCP, and node A runs the turns.
Every door on B answers for turns running on A — the answer, and over SSE the text as
A's model streams it — through the store's turn signals (docs/store-postgres.md).

B takes work too, so the test steers it to A: B runs one turn at a time
(``--max-running 1``) and is given a turn that waits at a gate before A starts; every
turn submitted afterwards can only run on A (each is checked in A's log)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest

from toolang_core.testing.live_server import bearer_client, parse_sse, server_url
from toolang_core.testing.processes import start_toolang_run, wait_for, wait_serving

pytestmark = pytest.mark.slow

KIT = r'''
import asyncio, os, re
from pathlib import Path
from toolang_core import Tool, ToolCall, hookimpl
from toolang_core.models import ModelResponse

_WORD = re.compile(r"\s*\S+\s*|\s+")


class SlowModel:
    """Echoes its input word by word, TL_WORD_DELAY seconds apart; "/gate NAME" calls
    gate_wait(NAME) first."""

    async def complete(self, request):
        last = request.messages[-1]
        if last.role == "tool":
            return ModelResponse(text=f"passed: {last.content}", model="slow")
        if last.content.startswith("/gate "):
            name = last.content.split()[1]
            return ModelResponse(tool_calls=(ToolCall("", "gate_wait", {"name": name}),),
                                 model="slow")
        return ModelResponse(text=f"echo: {last.content}", model="slow")

    async def stream(self, request):
        response = await self.complete(request)
        delay = float(os.environ.get("TL_WORD_DELAY", "0"))
        for index, word in enumerate(_WORD.findall(response.text)):
            if index and delay:
                await asyncio.sleep(delay)
            yield word
        yield response


class Provider:
    def model(self, model_id):
        return SlowModel()


@hookimpl
def toolang_register_models(register):
    register("slow", lambda context: Provider())


async def gate_wait(name: str) -> str:
    """Wait until the file NAME exists in TL_OUT_DIR."""
    gate = Path(os.environ["TL_OUT_DIR"]) / name
    while not gate.exists():
        await asyncio.sleep(0.05)
    return f"gate {name} opened"


@hookimpl
def toolang_register_tools(register):
    register(Tool.from_function(gate_wait, blocking=False))
'''

TOKEN = "alice-http-token-0123456789"
A2A_TOKEN = "alice-a2a-token"
PLUGINS = "server,source-a2a,source-mcp,agents-builtin,store-postgres,doors-kit"
WAIT = 120


def config(dsn: str, schema: str, key_file: Path, *, server: bool) -> str:
    return f"""
[log]
format = "json"

[runtime]
executor = "agent"
poll_seconds = 0.2
shutdown_grace_seconds = 0.5

[models]
default = "slow"

[agents]
unmatched_tools = "default"  # the kit's gate_wait

[store]
backend = "postgres"

[plugins.store-postgres]
dsn = "{dsn}"
schema = "{schema}"

[approvals]
key_file = {json.dumps(str(key_file))}

[plugins.server]
enabled = {"true" if server else "false"}
port = 0
tokens = {{ alice = "{TOKEN}" }}
""" + (f'[plugins.source-a2a]\ntokens = {{ alice = "{A2A_TOKEN}" }}\n' if server else "")


class Node:
    def __init__(self, root: Path, name: str, text: str, env: dict[str, str], *args: str):
        self.home = root / name
        self.home.mkdir()
        (self.home / "toolang.toml").write_text(text)
        self.log = self.home / "run.log"
        self.proc = start_toolang_run(self.home, env, self.log, *args)

    def finished(self, needle: str) -> bool:
        """Whether this node's log says it finished a turn (its id, or its output's
        start, ``needle``)."""
        for line in self.log.read_text(errors="replace").splitlines():
            if needle in line and '"turn.finished"' in line:
                return True
        return False

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except Exception:
                self.proc.kill()
                self.proc.wait(10)


@pytest.fixture
def nodes(tmp_path: Path, toolang_pg_dsn: str, toolang_pg_schema: str, toolang_distribution):
    toolang_distribution(
        "toolang-test-doors-kit",
        entry_points={"toolang": {"doors-kit": "tl_doors_kit"}},
        modules={"tl_doors_kit": KIT},
    )
    out = tmp_path / "out"
    out.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(
        PYTHONPATH=os.pathsep.join(filter(None, [str(toolang_distribution.root),
                                                 env.get("PYTHONPATH")])),
        TOOLANG_LOAD_PLUGINS=PLUGINS,
        TL_OUT_DIR=str(out),
        TL_WORD_DELAY="0.05",
    )  # fmt: skip
    key_file = tmp_path / "approval.key"
    started: list[Node] = []

    def start(name: str, *args: str, server: bool) -> Node:
        text = config(toolang_pg_dsn, toolang_pg_schema, key_file, server=server)
        node = Node(tmp_path, name, text, env, *args)
        started.append(node)
        return node

    try:
        yield start
    finally:
        (out / "gate").touch()  # let the steering turn end
        for node in started:
            node.stop()


def a2a(url: str, method: str, text: str, message_id: str) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {
            "message": {
                "messageId": message_id,
                "role": "ROLE_USER",
                "parts": [{"text": text}],
                "contextId": f"ctx-{message_id}",
            },
            "configuration": {"returnImmediately": False},
        },
    }
    return httpx.post(
        url + "/a2a/assistant",
        json=body,
        headers={"Authorization": f"Bearer {A2A_TOKEN}", "A2A-Version": "1.0"},
        timeout=WAIT,
    )


def mcp_ask(url: str, text: str) -> tuple[bool, str]:
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def ask() -> tuple[bool, str]:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with (
            client,
            streamable_http_client(url + "/api/mcp", http_client=client) as (read, write),
            ClientSession(read, write) as mcp,
        ):
            await mcp.initialize()
            (tool,) = [t.name for t in (await mcp.list_tools()).tools]
            result = await mcp.call_tool(tool, {"text": text})
            return bool(result.is_error), result.content[0].text  # type: ignore[union-attr]

    return anyio.run(ask)


def test_every_door_of_one_node_answers_and_streams_turns_running_on_another(nodes):
    start = nodes
    b = start("b", "--max-running", "1", server=True)
    url = server_url(b.proc, b.log, b.home, what=f"node b's server ({b.log})")
    api = bearer_client(url, TOKEN, timeout=WAIT)
    with api:
        # B's only slot: a turn waiting at a gate (opened when the test ends).
        gate = api.post("/api/turns", json={"input": "/gate gate", "thread_id": "chat:gate"})
        gate_id = gate.json()["turn_id"]
        wait_for(
            lambda: api.get(f"/api/turns/{gate_id}").json()["status"] == "running",
            what="node b running the gate turn",
        )
        a = start("a", server=False)
        wait_serving(a.proc, a.log, lambda: '"runtime.started"' in a.log.read_text(), what="a")

        # The JSON API: a submit on B waiting for its answer, from A.
        said = api.post(
            "/api/turns", json={"input": "hello over there", "thread_id": "chat:w", "wait": WAIT}
        )
        assert said.status_code == 200, said.text
        turn = said.json()
        assert (turn["status"], turn["output"]) == ("completed", "echo: hello over there")
        assert a.finished(turn["id"]), "the turn did not run on node a"

        # The SSE stream on B of a turn streaming on A: its text as it comes, then the end.
        # Longer than what the redaction of a stream holds back (HOLD_CHARS).
        words = " ".join(f"word{n:02d}" for n in range(40))
        with api.stream(
            "POST", "/api/turns", json={"input": words, "thread_id": "chat:s", "stream": True}
        ) as streamed:
            assert streamed.status_code == 200
            streamed_id = streamed.headers["X-Toolang-Turn"]
            raw = "".join(streamed.iter_text())
        events = parse_sse(raw)
        kinds = [kind for kind, _ in events]
        assert kinds[0] == "admitted" and kinds[-1] == "finished", kinds
        finished = events[-1][1]
        assert (finished["status"], finished["output"]) == ("completed", f"echo: {words}")
        texts = [data for kind, data in events if kind == "text"]
        # Relayed from A as it streamed: many parts (not only the stored answer at the
        # end), which join to the answer.
        assert len(texts) > 2, events
        assert "".join(str(d["delta"]) for d in texts) == f"echo: {words}"
        assert a.finished(streamed_id)

        # A2A on B: a blocking SendMessage and a streaming one, both answered from A.
        sent = a2a(url, "SendMessage", "hi by a2a", "m1").json()
        assert "echo: hi by a2a" in json.dumps(sent) and "TASK_STATE_COMPLETED" in json.dumps(
            sent
        ), sent
        assert a.finished(sent["result"]["task"]["id"])
        streamed_a2a = a2a(url, "SendStreamingMessage", "hi by a2a stream", "m2").text
        assert "echo: hi by a2a stream" in streamed_a2a, streamed_a2a
        assert "TASK_STATE_COMPLETED" in streamed_a2a, streamed_a2a

        # MCP on B: a call answered with A's answer.
        is_error, text = mcp_ask(url, "hi by mcp")
        assert not is_error and "echo: hi by mcp" in text, text
        assert a.finished("echo: hi by mcp")

        # B stayed busy with its gate all along: nothing else ran there.
        assert api.get(f"/api/turns/{gate_id}").json()["status"] == "running"
