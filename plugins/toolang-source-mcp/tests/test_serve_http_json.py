"""``[plugins.source-mcp] json_response = true``: the endpoint answers each call with
one JSON body instead of an SSE stream; a call, a retry that is the same turn and a
cancel from the client work as with SSE (the SDK's own client)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from source_mcp_kit import ALICE, MCP_SETTINGS, Home, http_session


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, site: Path) -> Iterator[Home]:
    settings = MCP_SETTINGS + "json_response = true\n"
    running = Home(tmp_path_factory.mktemp("home"), site, mcp=settings).start()
    yield running
    running.stop()


def test_a_call_is_answered_with_one_json_body(home: Home) -> None:
    opened = httpx.post(
        home.url + "/api/mcp",
        headers={
            "Authorization": f"Bearer {ALICE}",
            "Accept": "application/json, text/event-stream",
        },
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        timeout=60,
    )
    assert opened.status_code == 200
    assert opened.headers["content-type"].startswith("application/json")
    assert opened.json()["result"]["serverInfo"]["name"] == "toolang"

    async def run() -> None:
        async with http_session(home, ALICE) as mcp:
            asked = {"text": "json please", "request_id": "j-1", "thread": "json"}
            first = await mcp.call_tool("ask_assistant", asked)
            again = await mcp.call_tool("ask_assistant", asked)
        assert not first.is_error
        assert first.content[0].text == "echo: json please"  # type: ignore[union-attr]
        assert first.structured_content == again.structured_content

    anyio.run(run)
    assert home.received().count("json please") == 1
    assert len(home.turns(thread_id="mcp:json")) == 1


def test_cancel_from_the_client_cancels_the_turn(home: Home) -> None:
    async def run() -> None:
        async with http_session(home, ALICE) as mcp:
            async with anyio.create_task_group() as group:
                group.start_soon(
                    mcp.call_tool, "ask_assistant", {"text": "slow json", "thread": "cancel"}
                )
                deadline = time.monotonic() + 60
                while "slow json" not in home.received() and time.monotonic() < deadline:
                    await anyio.sleep(0.05)
                assert "slow json" in home.received()
                group.cancel_scope.cancel()  # the client abandons it: notifications/cancelled
            # The session stays open meanwhile, as a client's does when it drops one call
            # (the endpoint's late answer to the cancelled request finds it open).
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                found = home.turns(thread_id="mcp:cancel")
                if found and found[0].status.is_terminal:
                    break
                await anyio.sleep(0.05)
        assert [t.status.value for t in home.turns(thread_id="mcp:cancel")] == ["canceled"]

    anyio.run(run)
