"""One owner rule on every door, on both store backends: a thread belongs to the owner
of its first request, and anyone else — another owner, or the operator — is refused by
the HTTP API, the console, A2A, the MCP endpoint, `toolang submit`, `toolang chat`, the automator's
`cron_add` and a memory search alike, with the same message
(``toolang_core.store.owners.not_thread_owner``) and, over HTTP, the same status (403).

A real `toolang run` serves the home (the server, the A2A and the MCP endpoints on one
port, the demo model, the built-in roles, memory-sqlite), on SQLite and on PostgreSQL."""

from __future__ import annotations

import html
import json
import os
from pathlib import Path

import httpx
import pytest

from toolang_core.store.backend import not_thread_owner
from toolang_core.testing.cli import assert_no_traceback, run_toolang
from toolang_core.testing.processes import start_toolang_run, wait_for, wait_serving

HTTP = {"alice": "alice-http-token-0123456789", "bob": "bob-http-token-0123456789"}
A2A = {"alice": "alice-a2a-token", "bob": "bob-a2a-token"}
PLUGINS = (
    "server,source-a2a,source-mcp,source-chat,source-chore,model-demo,agents-builtin,"
    "tools-automator,memory-sqlite,store-postgres"
)
CONFIG = f"""
[runtime]
executor = "agent"
poll_seconds = 0.05
shutdown_grace_seconds = 0.5

[models]
default = "demo"

[memory]
plugin = "sqlite"

[plugins.server]
enabled = true
port = 0
tokens = {{ alice = "{HTTP["alice"]}", bob = "{HTTP["bob"]}" }}

[plugins.source-a2a]
tokens = {{ alice = "{A2A["alice"]}", bob = "{A2A["bob"]}" }}
"""
WAIT = 120


@pytest.fixture(params=["sqlite", "postgres"])
def home(request, tmp_path: Path):
    config = CONFIG
    if request.param == "postgres":
        dsn = request.getfixturevalue("toolang_pg_dsn")
        schema = request.getfixturevalue("toolang_pg_schema")
        config += (
            f'\n[store]\nbackend = "postgres"\n\n[plugins.store-postgres]\n'
            f'dsn = "{dsn}"\nschema = "{schema}"\n'
        )
    (tmp_path / "toolang.toml").write_text(config)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env["TOOLANG_LOAD_PLUGINS"] = PLUGINS
    log = tmp_path / "run.log"
    proc = start_toolang_run(tmp_path, env, log)
    url_file = tmp_path / ".toolang" / "server.url"
    try:
        wait_serving(proc, log, url_file.is_file, what=f"the server ({log})")
        yield tmp_path, url_file.read_text().strip()
    finally:
        proc.terminate()
        proc.wait(60)


def cli(home: Path, *args: str):
    return run_toolang(*args, cwd=home, env={"TOOLANG_LOAD_PLUGINS": PLUGINS}, timeout=WAIT)


def a2a_send(
    url: str, token: str, text: str, message_id: str, context: str, *, task_run: bool = False
) -> dict:
    message = {
        "messageId": message_id,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "contextId": context,
        **({"metadata": {"toolang.task_run": True}} if task_run else {}),
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": message, "configuration": {"returnImmediately": True}},
    }
    response = httpx.post(
        url + "/a2a/assistant",
        json=body,
        headers={"Authorization": f"Bearer {token}", "A2A-Version": "1.0"},
        timeout=WAIT,
    )
    return response.json()  # type: ignore[no-any-return]


def mcp_ask(url: str, token: str, thread: str) -> tuple[bool, str]:
    """One ``ask_<agent>`` call over /api/mcp with the `mcp` SDK's own client, as the
    owner of ``token``: whether it was an error, and its text."""
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def ask() -> tuple[bool, str]:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with (
            client,
            streamable_http_client(url + "/api/mcp", http_client=client) as (read, write),
            ClientSession(read, write) as mcp,
        ):
            await mcp.initialize()
            (tool,) = [t.name for t in (await mcp.list_tools()).tools]
            result = await mcp.call_tool(tool, {"text": "tell me", "thread": thread})
            return bool(result.is_error), result.content[0].text  # type: ignore[union-attr]

    return anyio.run(ask)


def test_every_door_refuses_another_owners_thread_with_the_one_rule_and_message(home):
    path, url = home
    bob = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {HTTP['bob']}"})
    alice = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {HTTP['alice']}"})
    console = httpx.Client(base_url=url)  # the console: a signed-in browser's cookie
    with bob, alice, console:
        # bob's threads: one over HTTP, one over A2A; the operator's, from the CLI.
        said = bob.post(
            "/api/turns", json={"input": "hello", "thread_id": "chat:bob", "wait": WAIT}
        )
        assert said.json()["status"] == "completed", said.text
        sent = a2a_send(url, A2A["bob"], "hello", "m-bob", "ctx-bob")
        assert "result" in sent, sent
        op = cli(path, "submit", "hello", "--thread", "cli:op")
        assert op.returncode == 0, op.stderr
        wait_for(lambda: bob.get("/api/threads").json(), what="bob's threads")

        refusals: dict[str, tuple[str, str]] = {}  # door -> (thread, what it answered)
        callers: dict[str, str] = {}  # door -> alice as that door names her, if not "alice"

        # The JSON API: 403, the message, field thread_id; nothing stored.
        for thread in ("chat:bob", "cli:op"):
            refused = alice.post("/api/turns", json={"input": "tell me", "thread_id": thread})
            assert refused.status_code == 403, refused.text
            assert refused.json()["error"]["field"] == "thread_id"
            refusals[f"api {thread}"] = (thread, refused.json()["error"]["message"])

        # The console: signed in with the token, its chat form posts to the same route.
        signed_in = console.post("/login", data={"token": HTTP["alice"], "next": "/"})
        # a page that sets the session's cookie and moves on (the strict cookie is sent)
        assert signed_in.status_code == 200 and "Signed in" in signed_in.text, signed_in.text
        refused = console.post(
            "/api/turns",
            json={"input": "tell me", "thread_id": "chat:bob"},
            headers={"Origin": url},
        )
        assert refused.status_code == 403, refused.text
        refusals["console"] = ("chat:bob", refused.json()["error"]["message"])
        page = console.get("/chat/chat:bob")  # nor shown as an empty thread to write to
        assert page.status_code == 403, page.text
        refusals["console page"] = ("chat:bob", html.unescape(page.text))

        # A memory search naming another owner's thread.
        refused = alice.get("/api/memory/search", params={"q": "hello", "thread_id": "chat:bob"})
        assert refused.status_code == 403, refused.text
        refusals["memory search"] = ("chat:bob", refused.json()["error"]["message"])

        # A2A: another caller's context, for a message and for handed-over work alike.
        for task_run in (False, True):
            sent = a2a_send(
                url, A2A["alice"], "tell me", f"m-alice-{task_run}", "ctx-bob", task_run=task_run
            )
            assert sent["error"]["code"] == -32602, sent
            refusals[f"a2a task_run={task_run}"] = ("a2a:ctx-bob", sent["error"]["message"])
            # an A2A caller is an owner in a namespace of its own: a2a:<caller>
            callers[f"a2a task_run={task_run}"] = "a2a:alice"

        # MCP (/api/mcp): the same tokens as the API; the tool answers isError, naming
        # the thread; a wrong token is refused before the endpoint runs.
        for thread in ("chat:bob", "cli:op"):
            is_error, text = mcp_ask(url, HTTP["alice"], thread)
            assert is_error, text
            refusals[f"mcp {thread}"] = (thread, text)
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "spy", "version": "0"}},
        }  # fmt: skip
        wrong = httpx.post(
            url + "/api/mcp",
            json=initialize,
            headers={
                "Authorization": "Bearer not-a-token-of-anyone-0123",
                "Accept": "application/json, text/event-stream",
            },
            timeout=WAIT,
        )
        assert wrong.status_code == 401, wrong.text

        # The command line: submit and chat, as another owner and as the operator.
        for args, owner in (
            (("submit", "tell me", "--thread", "chat:bob", "--owner", "alice"), "alice"),
            (("submit", "tell me", "--thread", "chat:bob"), None),
            (("chat", "--thread", "chat:bob", "--owner", "alice", "tell me"), "alice"),
            (("chat", "--thread", "chat:bob", "tell me"), None),
        ):
            result = cli(path, *args)
            assert result.returncode == 5, (args, result.stdout, result.stderr)
            assert_no_traceback(result)
            expected = str(not_thread_owner("chat:bob", owner))
            assert expected in result.stderr, (args, result.stderr)

        # The automator's cron_add: a chore on another owner's thread is refused when it
        # is added (its turns would be, at every occurrence).
        cron = {
            "name": "spy",
            "schedule_type": "every",
            "schedule": "5 minutes",
            "prompt": "tell me",
            "thread_id": "chat:bob",
        }
        said = alice.post(
            "/api/turns",
            json={
                "input": f"/tool cron_add {json.dumps(cron)}",
                "agent": "automator",
                "thread_id": "chat:alice",
                "wait": WAIT,
            },
        )
        assert said.json()["status"] == "completed", said.text
        steps = alice.get(f"/api/turns/{said.json()['id']}/steps").json()
        results = [json.dumps(s["data"]) for s in steps if s["kind"] == "tool_call"]
        assert results, steps
        refusals["cron_add"] = ("chat:bob", results[-1])

        for door, (thread, answer) in refusals.items():
            owner = callers.get(door, "alice")
            assert str(not_thread_owner(thread, owner)) in answer, (door, answer)

        # Nothing of alice's reached bob's threads or the operator's.
        mine = bob.get("/api/turns", params={"thread_id": "chat:bob"}).json()
        assert [t["owner"] for t in mine] == ["bob"]

        # Memory (memory-sqlite) is the owner's too: bob finds what his turn left, alice
        # nothing of it, with or without naming a thread of hers.
        def found(client: httpx.Client, **params: str) -> list[str]:
            answer = client.get("/api/memory/search", params={"q": "hello", **params})
            assert answer.status_code == 200, answer.text
            return [item["text"] for item in answer.json()["items"]]

        assert wait_for(lambda: found(bob), what="bob's memory of his turn")
        assert found(bob, thread_id="chat:bob")
        assert found(alice) == [] and found(alice, thread_id="chat:alice") == []
