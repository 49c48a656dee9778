"""The A2A routes as the server plugin mounts them: collected through
``toolang_register_routes`` and served by one Starlette app whose authentication put the
caller in ``request.state.owner`` (here a stand-in middleware)."""

from __future__ import annotations

import asyncio

import httpx
from starlette.applications import Starlette
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.routing import Route

import toolang_source_a2a
from toolang_core import TurnFilter

V1 = {"A2A-Version": "1.0"}


def mounted(runtime):
    routes, failures = runtime.host.hooks.register_routes()
    assert failures == []
    mine = [r for r in routes if r.plugin == "source-a2a"]
    assert {(r.path, r.methods, r.auth) for r in mine} == {
        ("/.well-known/agent-card.json", ("GET",), False),
        ("/a2a/{agent}/.well-known/agent-card.json", ("GET",), False),
        ("/a2a/{agent}", ("POST",), False),
    }

    async def owner(request, call_next):
        request.state.owner = "carol"  # what the server's token check would set
        return await call_next(request)

    app = Starlette(routes=[Route(r.path, r.endpoint, methods=list(r.methods)) for r in mine])
    app.add_middleware(BaseHTTPMiddleware, dispatch=owner)
    app.state.runtime = runtime
    return app


class Client:
    """Requests to the ASGI app in-process (httpx's ASGI transport)."""

    def __init__(self, app) -> None:
        self.app = app

    def _call(self, method: str, path: str, **kwargs) -> httpx.Response:
        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
                return await c.request(method, path, **kwargs)

        return asyncio.run(go())

    def get(self, path: str, **kwargs) -> httpx.Response:
        return self._call("GET", path, **kwargs)

    def post(self, path: str, **kwargs) -> httpx.Response:
        return self._call("POST", path, **kwargs)


def test_the_routes_work_mounted_on_a_server(toolang_runtime):
    runtime = toolang_runtime(
        '[plugins.source-a2a]\npublic_url = "https://agents.example.com"\n',
        plugins={"source-a2a": toolang_source_a2a},
    )
    client = Client(mounted(runtime))
    card = client.get("/.well-known/agent-card.json").json()
    assert card["supportedInterfaces"][0]["url"] == "https://agents.example.com/a2a/assistant"
    assert "securitySchemes" not in card  # no tokens: the server's own auth applies
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    sent = client.post(
        "/a2a/assistant",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {"message": message, "configuration": {"returnImmediately": True}},
        },
        headers=V1,
    ).json()
    task = sent["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
    store = runtime.open_store()
    try:
        [turn] = store.list_turns(TurnFilter(limit=10))
    finally:
        store.close()
    assert (turn.id, turn.owner, turn.sender, turn.status.value) == (
        task["id"],
        "carol",
        "carol",
        "queued",
    )
    unknown = client.post(
        "/a2a/nobody",
        json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}},
        headers=V1,
    )
    assert unknown.status_code == 404


def test_a_callers_w3c_trace_context_is_kept_with_the_turn_request(toolang_runtime):
    runtime = toolang_runtime("", plugins={"source-a2a": toolang_source_a2a})
    client = Client(mounted(runtime))
    parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    def send(message_id: str, headers: dict[str, str]) -> None:
        message = {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "hi"}]}
        answer = client.post(
            "/a2a/assistant",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {"message": message, "configuration": {"returnImmediately": True}},
            },
            headers=V1 | headers,
        ).json()
        assert "result" in answer, answer

    send("traced", {"traceparent": parent, "tracestate": "vendor=abc"})
    send("malformed", {"traceparent": "00-not-a-trace-01"})
    send("plain", {})
    store = runtime.open_store()
    try:
        turns = {t.id: t.meta for t in store.list_turns(TurnFilter(limit=10))}
    finally:
        store.close()
    by_message = {meta["a2a_message_id"]: meta for meta in turns.values()}
    expected = {"traceparent": parent, "tracestate": "vendor=abc"}
    assert by_message["traced"]["trace_context"] == expected
    assert "trace_context" not in by_message["malformed"]
    assert "trace_context" not in by_message["plain"]


def test_a_body_nested_100000_deep_is_a_json_rpc_parse_error_with_a_400(toolang_runtime):
    runtime = toolang_runtime("", plugins={"source-a2a": toolang_source_a2a})
    client = Client(mounted(runtime))
    deep = "[" * 100_000 + "]" * 100_000
    for body in (deep, '{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": ' + deep + "}"):
        refused = client.post(
            "/a2a/assistant", content=body, headers={**V1, "content-type": "application/json"}
        )
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["code"] == -32700


def test_a_v03_method_under_another_version_header_gets_the_protocols_version_error(
    toolang_runtime,
):
    """The SDK's v0.3 adapter answers a version mismatch with -32603 (internal error);
    the endpoint answers with A2A's VersionNotSupportedError, as for SendMessage."""
    runtime = toolang_runtime("", plugins={"source-a2a": toolang_source_a2a})
    client = Client(mounted(runtime))
    message = {"messageId": "m1", "role": "user", "kind": "message", "parts": []}
    for version in ("1.0", "2.0", "banana"):
        for method, params in (("message/send", {"message": message}), ("tasks/get", {"id": "x"})):
            answer = client.post(
                "/a2a/assistant",
                json={"jsonrpc": "2.0", "id": 7, "method": method, "params": params},
                headers={"A2A-Version": version},
            ).json()
            assert answer["id"] == 7
            assert answer["error"]["code"] == -32009, (version, method, answer)
            assert answer["error"]["data"][0]["reason"] == "VERSION_NOT_SUPPORTED"
            assert repr(version) in answer["error"]["message"]
    # As before: the same method under a 0.3 header (or none) is served.
    for headers in ({"A2A-Version": "0.3"}, {}):
        got = client.post(
            "/a2a/assistant",
            json={"jsonrpc": "2.0", "id": 8, "method": "tasks/get", "params": {"id": "x"}},
            headers=headers,
        ).json()
        assert got["error"]["code"] == -32001  # task not found: it was dispatched
    # And the 1.0 method under a mismatched header keeps the SDK's own answer.
    got = client.post(
        "/a2a/assistant",
        json={"jsonrpc": "2.0", "id": 9, "method": "GetTask", "params": {"id": "x"}},
        headers={"A2A-Version": "2.0"},
    ).json()
    assert got["error"]["code"] == -32009
