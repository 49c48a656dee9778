"""Calling a remote agent through the ``a2a`` model provider, against a real A2A server
that is not toolang (a2a-sdk's own request handler): the answer comes back, the call is
in the call log, and an unreachable endpoint is a clear error."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from toolang_agents_remote import RemoteSettings
from toolang_agents_remote.calls import RemoteAgentProvider
from toolang_agents_remote.testing import A2AServer
from toolang_core.models import Message, ModelError, ModelRequest
from toolang_core.store.sqlite.plugin_tables import SqlitePluginDatabases


def files(home):
    """Plugins' databases as a runtime on the SQLite store has them."""
    return SqlitePluginDatabases(home / "plugins")


def ask(provider: RemoteAgentProvider, url: str, text: str, key: str) -> str:
    request = ModelRequest(messages=(Message(role="user", content=text),), key=key)
    return asyncio.run(provider.model(url).complete(request)).text


def test_a_remote_a2a_agent_answers_and_the_call_is_logged(tmp_path):
    with A2AServer("Echo") as server:
        provider = RemoteAgentProvider(
            RemoteSettings(endpoints=[server.url]), tmp_path, files(tmp_path)
        )
        assert ask(provider, server.url, "bonjour", "turn-1:model:0") == "bonjour"
    [call] = provider.log.recent(server.url)
    assert call["state"] == "completed"


def test_an_unreachable_agent_is_a_clear_error(tmp_path):
    with A2AServer("Echo") as server:
        url = server.url
    provider = RemoteAgentProvider(
        RemoteSettings(endpoints=[url], call_timeout_seconds=5), tmp_path, files(tmp_path)
    )
    with pytest.raises(ModelError, match=r"unreachable|did not answer"):
        ask(provider, url, "hello", "turn-2:model:0")
    [call] = provider.log.recent(url)
    assert call["state"] == "failed" and url in str(call["error"])


def test_a_remote_that_drops_the_connection_mid_call_is_a_clear_error(tmp_path):
    """A server process killed with the request in flight: the connection closes with
    no answer (httpx's RemoteProtocolError / ReadError, which say nothing of where)."""
    listener = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"

    def hang_up() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # the test closed the listener
                return
            conn.recv(65536)
            conn.close()

    threading.Thread(target=hang_up, daemon=True).start()
    provider = RemoteAgentProvider(
        RemoteSettings(endpoints=[url], call_timeout_seconds=5), tmp_path, files(tmp_path)
    )
    try:
        with pytest.raises(ModelError) as raised:
            ask(provider, url, "hello", "turn-3:model:0")
    finally:
        listener.close()
    assert str(raised.value).startswith(
        f"remote agent at {url} is unreachable: the connection was lost mid-call ("
    )


def test_the_requests_headers_go_with_the_message(tmp_path):
    parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    with A2AServer("Echo") as server:
        provider = RemoteAgentProvider(
            RemoteSettings(endpoints=[server.url]), tmp_path, files(tmp_path)
        )
        request = ModelRequest(
            messages=(Message(role="user", content="hi"),),
            key="turn-3:model:0",
            headers={"traceparent": parent, "tracestate": "vendor=abc"},
        )
        assert asyncio.run(provider.model(server.url).complete(request)).text == "hi"
    sent = server.posted[0]  # SendMessage (GetTask follows it when the task is not final)
    assert (sent["traceparent"], sent["tracestate"]) == (parent, "vendor=abc")
    assert sent["a2a-version"]  # the client's own headers are still there
