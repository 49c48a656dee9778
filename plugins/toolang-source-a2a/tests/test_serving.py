"""A toolang runtime (a real `toolang run` process) served over A2A and driven by a
plain a2a-sdk client — not toolang: card, send, stream, get, cancel, owners, auth, and
the spec's error objects for bad requests, with nothing stored for them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_text_message
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from a2a_kit import Runtime, install_kit

from toolang_core import TurnFilter
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.testing.processes import wait_for

CONFIG = """
[plugins.source-a2a]
listen = "127.0.0.1:{port}"
tokens = { alice = "alice-token", bob = "bob-token" }
max_request_bytes = 4096
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("serving")
    install_kit(root / "site")
    runtime = Runtime(
        root / "b",
        root / "site",
        CONFIG,
        plugins="source-a2a,echo-model,source-chat,source-task",
    ).start()
    yield runtime
    runtime.stop()


def client_for(runtime: Runtime, token: str, *, streaming: bool = False):
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return http, create_client(
        runtime.url + "/a2a/assistant",
        ClientConfig(streaming=streaming, httpx_client=http),
        resolver_http_kwargs={"headers": {"Authorization": f"Bearer {token}"}},
    )


def store_of(runtime: Runtime) -> SQLiteStore:
    return SQLiteStore(runtime.home / ".toolang" / "toolang.db")


def test_the_card_is_served_at_the_well_known_paths(served):
    card = httpx.get(served.url + "/.well-known/agent-card.json").json()
    same = httpx.get(served.url + "/a2a/assistant/.well-known/agent-card.json").json()
    assert card == same
    assert card["name"] == "assistant"
    assert card["supportedInterfaces"][0]["url"] == served.url + "/a2a/assistant"
    assert card["supportedInterfaces"][0]["protocolBinding"] == "JSONRPC"
    assert card["capabilities"]["streaming"] is True
    assert set(card["securitySchemes"]) == {"bearer", "apiKey"}
    assert card["skills"][0]["id"] == "assistant"
    assert httpx.get(served.url + "/a2a/nobody/.well-known/agent-card.json").status_code == 404
    # a2a-sdk's own resolver reads it
    cli = served.cli("a2a", "card")
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["assistant"]["name"] == "assistant"
    checked = served.cli("a2a", "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "ok    card assistant: valid" in checked.stdout
    assert f"ok    card assistant: served at {served.url}" in checked.stdout
    doctor = json.loads(served.cli("doctor", "--json").stdout)  # the same findings
    found = [c for c in doctor if c["area"] == "a2a"]
    assert [c["status"] for c in found] == ["ok", "ok", "ok"], found
    assert found[0]["summary"] == f"served on its own port at {served.url}/a2a/…"


def test_send_get_stream_and_cancel_with_a_plain_a2a_client(served):
    async def scenario():
        _http, pending = client_for(served, "alice-token")
        client = await pending
        async with client:
            # a blocking send: the answer comes back completed
            message = new_text_message("hello there", context_id="ctx-1")
            events = [e async for e in client.send_message(SendMessageRequest(message=message))]
            task = events[-1].task
            assert task.status.state == TaskState.TASK_STATE_COMPLETED
            assert task.context_id == "ctx-1"
            assert task.artifacts[0].parts[0].text == "echo: hello there"
            turn = store_of(served).get(task.id)
            assert (turn.thread_id, turn.owner, turn.sender, turn.source, turn.channel) == (
                "a2a:ctx-1",
                "a2a:alice",
                "a2a:alice",
                "chat",
                "a2a",
            )
            got = await client.get_task(GetTaskRequest(id=task.id))
            assert got.status.state == TaskState.TASK_STATE_COMPLETED

            # a message naming the task continues its thread
            follow = new_text_message("and again", task_id=task.id)
            events = [e async for e in client.send_message(SendMessageRequest(message=follow))]
            second = events[-1].task
            assert second.id != task.id and second.context_id == "ctx-1"
            assert store_of(served).get(second.id).thread_id == "a2a:ctx-1"

            # a non-blocking send is stored queued before the answer, then canceled
            slow = new_text_message("slow work", context_id="ctx-2")
            events = [
                e
                async for e in client.send_message(
                    SendMessageRequest(
                        message=slow,
                        configuration=SendMessageConfiguration(return_immediately=True),
                    )
                )
            ]
            queued = events[-1].task
            assert queued.status.state in (
                TaskState.TASK_STATE_SUBMITTED,
                TaskState.TASK_STATE_WORKING,
            )
            assert store_of(served).get(queued.id) is not None
            canceled = await client.cancel_task(CancelTaskRequest(id=queued.id))
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED
            assert store_of(served).get(queued.id).status.value == "canceled"
        return task.id

    asyncio.run(scenario())


def test_streaming_sends_status_updates_and_the_answer(served):
    async def scenario():
        _http, pending = client_for(served, "alice-token", streaming=True)
        client = await pending
        async with client:
            message = new_text_message("stream me", context_id="ctx-stream")
            events = [e async for e in client.send_message(SendMessageRequest(message=message))]
        kinds = [e.WhichOneof("payload") for e in events]
        assert kinds[0] == "task"
        assert "artifact_update" in kinds
        assert kinds[-1] == "status_update"
        assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
        artifact = next(e.artifact_update for e in events if e.HasField("artifact_update"))
        assert artifact.artifact.parts[0].text == "echo: stream me"

    asyncio.run(scenario())


V1 = {"A2A-Version": "1.0"}


def rpc(
    runtime: Runtime,
    body,
    *,
    token: str = "alice-token",
    raw: bytes | None = None,
    version: str | None = "1.0",
    headers: dict[str, str] | None = None,
):
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        **(headers or {}),
    }
    if version:
        headers["A2A-Version"] = version
    content = raw if raw is not None else json.dumps(body).encode()
    return httpx.post(runtime.url + "/a2a/assistant", content=content, headers=headers)


def send_body(text: str, message_id: str, **extra):
    message = {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}], **extra}
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


def test_callers_are_owners_and_unauthenticated_calls_are_refused(served):
    sent = rpc(
        served,
        {
            **send_body("mine", "m-own"),
            "params": {
                "message": send_body("mine", "m-own")["params"]["message"],
                "configuration": {"returnImmediately": True},
            },
        },
    ).json()
    task_id = sent["result"]["task"]["id"]
    for method in ("GetTask", "CancelTask"):
        other = rpc(
            served,
            {"jsonrpc": "2.0", "id": 2, "method": method, "params": {"id": task_id}},
            token="bob-token",
        ).json()
        assert other["error"]["code"] == -32001, other  # TaskNotFound: not bob's
    assert store_of(served).get(task_id).status.value != "canceled"
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"X-API-Key": "wrong"}):
        refused = httpx.post(
            served.url + "/a2a/assistant", json=send_body("x", "m-x"), headers=headers
        )
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
    by_key = httpx.post(
        served.url + "/a2a/assistant",
        json={"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": task_id}},
        headers={"X-API-Key": "alice-token", **V1},
    ).json()
    assert by_key["result"]["id"] == task_id
    # bob cannot continue alice's context either (this test's own: it runs alone too)
    rpc(served, send_body("hi", "m-alice-own", contextId="ctx-own"))
    intruder = rpc(served, send_body("hi", "m-bob", contextId="ctx-own"), token="bob-token").json()
    assert intruder["error"]["code"] == -32602


def test_bad_requests_get_spec_error_objects_and_store_nothing(served):
    store = store_of(served)

    def count() -> int:
        return len(store.list_turns(TurnFilter(limit=10_000)))

    def get(task_id: str) -> dict[str, object]:
        return {"jsonrpc": "2.0", "id": 9, "method": "GetTask", "params": {"id": task_id}}

    done = rpc(served, send_body("finish", "m-done")).json()["result"]["task"]["id"]
    before = count()
    cases = {
        "parse error": (None, b"{not json", -32700),
        "not jsonrpc 2.0": ({"jsonrpc": "1.0", "id": 1, "method": "GetTask"}, None, -32600),
        "batch": ([get("a"), get("b")], None, -32600),
        "no method": ({"jsonrpc": "2.0", "id": 1}, None, -32600),
        "unknown method": ({"jsonrpc": "2.0", "id": 1, "method": "Frobnicate"}, None, -32601),
        "bad params": (
            {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": 7}},
            None,
            -32602,
        ),
        "no text": (send_body("", "m-empty"), None, -32602),
        # the inbox's refusal (input: expected text without NUL bytes); was -32603
        "a nul in the text": (send_body("a\x00b", "m-nul"), None, -32602),
        "bad context id": (send_body("x", "m-ctx", contextId="../../etc"), None, -32602),
        "unknown task": (get("no-such-task"), None, -32001),
        "unknown task in a message": (send_body("x", "m-t", taskId="no-such-task"), None, -32001),
        "not cancelable": (
            {"jsonrpc": "2.0", "id": 1, "method": "CancelTask", "params": {"id": done}},
            None,
            -32002,
        ),
        "push notifications": (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "CreateTaskPushNotificationConfig",
                "params": {"taskId": done, "url": "http://127.0.0.1:1/hook"},
            },
            None,
            -32003,
        ),
        "file part": (
            {
                **send_body("x", "m-file"),
                "params": {
                    "message": {
                        "messageId": "m-file",
                        "role": "ROLE_USER",
                        "parts": [{"url": "http://example.invalid/f.pdf"}],
                    }
                },
            },
            None,
            -32005,
        ),
        "extended card": (
            {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}},
            None,
            -32007,
        ),
        "oversize": (send_body("x" * 5000, "m-big"), None, -32600),
    }
    seen = {}
    old_client = rpc(served, send_body("x", "m-old"), version=None).json()
    assert old_client["error"]["code"] == -32009  # VersionNotSupported: no A2A-Version: 1.0
    for kind, (body, raw, code) in cases.items():
        answer = rpc(served, body, raw=raw)
        data = answer.json()
        assert "error" in data and "result" not in data, (kind, data)
        assert data["error"]["code"] == code, (kind, data)
        assert isinstance(data["error"]["message"], str) and "Traceback" not in answer.text
        seen[kind] = code
    assert len(seen) >= 10
    assert count() == before  # nothing stored for any of them
    # v0.3 method names work too (message/send, tasks/get)
    old = rpc(
        served,
        {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "nope"}},
        version=None,
    )
    assert old.json()["error"]["code"] == -32001, old.json()


def test_a_retried_message_is_the_same_task(served):
    first = rpc(served, send_body("once", "m-retry")).json()["result"]["task"]
    again = rpc(served, send_body("once", "m-retry")).json()["result"]["task"]
    assert first["id"] == again["id"]
    wait_for(lambda: served.received().count("once") >= 1, 30, "the answer")
    assert served.received().count("once") == 1


def test_non_loopback_listen_without_tokens_is_refused(tmp_path: Path):
    install_kit(tmp_path / "site")
    runtime = Runtime(
        tmp_path / "open", tmp_path / "site", '[plugins.source-a2a]\nlisten = "0.0.0.0:{port}"\n'
    )
    result = runtime.cli("a2a", "card")
    assert result.returncode != 0
    down = Runtime(tmp_path / "down", tmp_path / "site", CONFIG)  # configured, not running
    checked = down.cli("a2a", "check")
    assert checked.returncode == 1
    assert "not answered at" in checked.stdout
    doctor = down.cli("doctor")
    assert doctor.returncode == 1  # doctor reports the A2A server that is not there
    assert "card assistant: not answered at" in doctor.stdout
    assert "plugins.source-a2a" in result.stderr and "without a token" in result.stderr


def test_subscribe_follows_a_task_until_it_is_canceled(served):
    from a2a.types.a2a_pb2 import SubscribeToTaskRequest

    async def scenario():
        _http, pending = client_for(served, "alice-token", streaming=True)
        client = await pending
        _http2, pending2 = client_for(served, "alice-token")
        sender = await pending2
        async with client, sender:
            sent = [
                e
                async for e in sender.send_message(
                    SendMessageRequest(
                        message=new_text_message("slow subscribe", context_id="ctx-sub"),
                        configuration=SendMessageConfiguration(return_immediately=True),
                    )
                )
            ]
            task_id = sent[-1].task.id
            wait_for(lambda: store_of(served).get(task_id).status.value == "running", 30, "running")

            async def cancel_soon() -> None:
                await asyncio.sleep(0.3)
                await client.cancel_task(CancelTaskRequest(id=task_id))

            canceler = asyncio.create_task(cancel_soon())
            events = [e async for e in client.subscribe(SubscribeToTaskRequest(id=task_id))]
            await canceler
        states = [e.status_update.status.state for e in events if e.HasField("status_update")]
        assert states[-1] == TaskState.TASK_STATE_CANCELED

    asyncio.run(scenario())


def test_work_handed_over_for_tracking_is_a_task_run(served):
    body = send_body("track this", "m-run", contextId="ctx-run")
    body["params"]["message"]["metadata"] = {"toolang.task_run": True}
    parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    task = rpc(served, body, headers={"traceparent": parent}).json()["result"]["task"]
    assert task["contextId"] == "ctx-run"
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    assert task["artifacts"][0]["parts"][0]["text"] == "echo: track this"
    again = rpc(served, body).json()["result"]["task"]  # a retry is the same run
    assert again["id"] == task["id"]
    runs = served.cli("tasks", "runs", "--json")
    assert runs.returncode == 0, runs.stderr
    [run] = [r for r in json.loads(runs.stdout) if r["id"] == task["id"]]
    assert run["owner"] == "a2a:alice"
    store = store_of(served)
    try:  # the caller's W3C trace context goes with the run: a tracer continues it
        assert store.get(task["id"]).meta["trace_context"] == {"traceparent": parent}
    finally:
        store.close()
    other = rpc(
        served,
        {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task["id"]}},
        token="bob-token",
    ).json()
    assert other["error"]["code"] == -32001
