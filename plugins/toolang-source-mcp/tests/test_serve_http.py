"""The streamable-HTTP endpoint on a real `toolang run`, driven by the `mcp` SDK's own
client: the agents listed as tools, a call answered by a durable turn, a retry that is
the same turn, tokens → owners, another owner's thread refused, cancel."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from source_mcp_kit import ALICE, BOB, MCP_SETTINGS, Home, http_session


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, site: Path) -> Iterator[Home]:
    running = Home(tmp_path_factory.mktemp("home"), site).start()
    yield running
    running.stop()


def test_lists_the_agents_and_answers_a_call(home: Home) -> None:
    async def run() -> None:
        async with http_session(home, ALICE) as mcp:
            listed = await mcp.list_tools()
            assert [t.name for t in listed.tools] == ["ask_assistant"]
            result = await mcp.call_tool("ask_assistant", {"text": "hello there"})
            assert not result.is_error
            assert result.content[0].text == "echo: hello there"  # type: ignore[union-attr]
            facts = result.structured_content or {}
            assert facts["status"] == "completed"
            stored = [t for t in home.turns(owner="alice") if t.id == facts["turn_id"]]
            assert stored and stored[0].channel == "mcp"

    anyio.run(run)


def test_a_retried_call_is_the_same_turn(home: Home) -> None:
    async def run() -> None:
        async with http_session(home, ALICE) as mcp:
            asked = {"text": "only once", "request_id": "r-1", "thread": "retry"}
            first = await mcp.call_tool("ask_assistant", asked)
        async with http_session(home, ALICE) as mcp:  # a new session: a reconnect
            second = await mcp.call_tool("ask_assistant", asked)
        assert first.structured_content == second.structured_content
        assert home.received().count("only once") == 1
        assert len(home.turns(thread_id="mcp:retry")) == 1

    anyio.run(run)


def test_a_wrong_token_is_refused(home: Home) -> None:
    async def run() -> None:
        async with http_session(home, "not-a-token") as mcp:
            await mcp.list_tools()

    with pytest.raises(ExceptionGroup) as refused:  # the SDK's error, in its task group
        anyio.run(run)
    assert "MCPError" in repr(refused.value)
    # what the SDK reported: the server's 401, before the endpoint ran
    raw = httpx.post(
        home.url + "/api/mcp",
        headers={"Authorization": "Bearer not-a-token", "Accept": "application/json"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        timeout=60,
    )
    assert raw.status_code == 401
    assert not home.turns(owner="not-a-token")


def test_another_owners_thread_is_refused(home: Home) -> None:
    async def run() -> None:
        async with http_session(home, ALICE) as mcp:
            mine = await mcp.call_tool("ask_assistant", {"text": "mine", "thread": "alices"})
            assert not mine.is_error
        async with http_session(home, BOB) as mcp:
            theirs = await mcp.call_tool("ask_assistant", {"text": "sneak", "thread": "alices"})
            assert theirs.is_error
            assert "mcp:alices" in theirs.content[0].text  # type: ignore[union-attr]

    anyio.run(run)
    assert "sneak" not in home.received()
    assert [t.owner for t in home.turns(thread_id="mcp:alices")] == ["alice"]


def test_a_field_the_inbox_refuses_is_an_error_result_naming_it(home: Home) -> None:
    """Before, the client heard only "Error executing tool ask_assistant"."""

    async def run() -> None:
        async with http_session(home, ALICE) as mcp:
            nul = await mcp.call_tool("ask_assistant", {"text": "a\x00b", "thread": "t"})
            assert nul.is_error
            said = nul.content[0].text  # type: ignore[union-attr]
            assert "input: expected text without NUL bytes" in said
            thread = await mcp.call_tool("ask_assistant", {"text": "x", "thread": "a\nb"})
            assert thread.is_error
            assert "expected no control characters" in thread.content[0].text  # type: ignore[union-attr]

    anyio.run(run)
    assert not home.turns(thread_id="mcp:t")  # nothing stored (the home is the module's)


def test_cancel_from_the_client_cancels_the_turn(home: Home) -> None:
    async def run() -> None:
        async with http_session(home, ALICE) as mcp, anyio.create_task_group() as group:
            group.start_soon(
                mcp.call_tool, "ask_assistant", {"text": "slow one", "thread": "cancel"}
            )
            deadline = time.monotonic() + 60
            while "slow one" not in home.received() and time.monotonic() < deadline:
                await anyio.sleep(0.05)
            assert "slow one" in home.received()
            group.cancel_scope.cancel()  # the client abandons it: notifications/cancelled
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = home.turns(thread_id="mcp:cancel")
            if found and found[0].status.is_terminal:
                break
            await anyio.sleep(0.05)
        assert [t.status.value for t in home.turns(thread_id="mcp:cancel")] == ["canceled"]

    anyio.run(run)


def test_the_sdks_logging_set_up_leaves_the_runtimes_log_json(tmp_path: Path, site: Path) -> None:
    """Building the MCP server calls ``logging.basicConfig(level="INFO")``: the runtime's
    log stays one JSON line per record (the SDK's and httpx's info lines not shown)."""
    json_home = Home(tmp_path / "json-home", site, extra='\n[log]\nformat = "json"\n').start()
    try:

        async def run() -> None:
            async with http_session(json_home, ALICE) as mcp:
                result = await mcp.call_tool("ask_assistant", {"text": "hello there"})
                assert not result.is_error

        anyio.run(run)
    finally:
        log = json_home.stop()
    # The server's two start lines are for the terminal (a sign-in link is never logged).
    lines = [x for x in log.splitlines() if x and not x.startswith("toolang server: ")]
    events = [json.loads(line)["event"] for line in lines]  # each line is JSON
    assert "runtime.started" in events and "runtime.stopped" in events
    assert "StreamableHTTP session manager" not in log


def _ready_events(log: str) -> list[dict[str, object]]:
    records = [json.loads(x) for x in log.splitlines() if x.startswith("{")]
    return [r for r in records if r["event"] == "mcp.endpoint.ready"]


def _call(home: Home) -> None:
    async def run() -> None:
        async with http_session(home, ALICE) as mcp:
            result = await mcp.call_tool("ask_assistant", {"text": "hello there"})
            assert not result.is_error

    anyio.run(run)


def test_by_default_the_first_request_builds_the_endpoint(tmp_path: Path, site: Path) -> None:
    """A runtime no MCP client calls never loads the SDK (some 50 MB resident): the
    endpoint's server is built by the first request, once, and that call is answered."""
    lazy = Home(tmp_path / "lazy", site, extra='\n[log]\nformat = "json"\n').start()
    try:
        _call(lazy)
        _call(lazy)
    finally:
        log = lazy.stop()
    assert [e["on"] for e in _ready_events(log)] == ["first_use"]


def test_start_startup_builds_the_endpoint_before_any_request(tmp_path: Path, site: Path) -> None:
    eager = Home(
        tmp_path / "eager",
        site,
        mcp=MCP_SETTINGS + 'start = "startup"\n',
        extra='\n[log]\nformat = "json"\n',
    ).start()
    try:
        deadline = time.monotonic() + 120
        while not _ready_events(eager.log.read_text(encoding="utf-8")):
            assert time.monotonic() < deadline, "the endpoint was not built at start-up"
            time.sleep(0.05)
        _call(eager)
    finally:
        log = eager.stop()
    assert [e["on"] for e in _ready_events(log)] == ["startup"]


def test_a_start_that_is_no_choice_is_refused_naming_the_key(tmp_path: Path, site: Path) -> None:
    home = Home(tmp_path / "wrong", site, mcp=MCP_SETTINGS + 'start = "eager"\n')
    done = home.cli("chat", "hello")
    assert done.returncode != 0
    assert "start" in done.stderr and "first_use" in done.stderr, done.stderr
