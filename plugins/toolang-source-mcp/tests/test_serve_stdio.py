"""`toolang mcp serve` over stdio, driven by the `mcp` SDK's own client: without a
runtime it runs each call's turn itself; with `toolang run` serving the store it only
submits and follows."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
from source_mcp_kit import Home, stdio_session


def test_without_a_runtime_it_answers_once_per_request_id(tmp_path: Path, site: Path) -> None:
    home = Home(tmp_path / "home", site, server=False)

    async def run() -> None:
        async with stdio_session(home, "--owner", "alice") as mcp:
            listed = await mcp.list_tools()
            assert [t.name for t in listed.tools] == ["ask_assistant"]
            asked = {"text": "hi from stdio", "thread": "desk", "request_id": "k-1"}
            first = await mcp.call_tool("ask_assistant", asked)
            assert not first.is_error
            assert first.content[0].text == "echo: hi from stdio"  # type: ignore[union-attr]
        async with stdio_session(home, "--owner", "alice") as mcp:  # the client started it again
            again = await mcp.call_tool("ask_assistant", asked)
        assert again.structured_content == first.structured_content
        async with stdio_session(home, "--owner", "bob") as mcp:
            theirs = await mcp.call_tool("ask_assistant", {"text": "sneak", "thread": "desk"})
            assert theirs.is_error
            assert "mcp:desk" in theirs.content[0].text  # type: ignore[union-attr]

    anyio.run(run)
    assert home.received() == ["hi from stdio"]
    stored = home.turns(thread_id="mcp:desk")
    assert [(t.owner, t.status.value, t.channel) for t in stored] == [("alice", "completed", "mcp")]


def test_with_a_runtime_it_submits_and_cancel_reaches_the_turn(tmp_path: Path, site: Path) -> None:
    home = Home(tmp_path / "home", site).start()
    try:

        async def run() -> None:
            async with stdio_session(home) as mcp:
                answered = await mcp.call_tool("ask_assistant", {"text": "served"})
                assert answered.content[0].text == "echo: served"  # type: ignore[union-attr]
                async with anyio.create_task_group() as group:
                    group.start_soon(
                        mcp.call_tool, "ask_assistant", {"text": "slow one", "thread": "c"}
                    )
                    deadline = time.monotonic() + 60
                    while "slow one" not in home.received() and time.monotonic() < deadline:
                        await anyio.sleep(0.05)
                    assert "slow one" in home.received()
                    group.cancel_scope.cancel()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                found = home.turns(thread_id="mcp:c")
                if found and found[0].status.is_terminal:
                    break
                await anyio.sleep(0.05)

        anyio.run(run)
        assert [t.status.value for t in home.turns(thread_id="mcp:c")] == ["canceled"]
    finally:
        home.stop()


def test_an_unknown_agent_is_named(tmp_path: Path, site: Path) -> None:
    home = Home(tmp_path / "home", site, server=False, extra='agents = ["nobody"]\n')
    done = home.cli("mcp", "serve")
    assert done.returncode != 0
    assert "nobody" in done.stderr
    assert "[plugins.source-mcp] agents" in done.stderr
