"""A stdio MCP server runs in the tool sandbox: what it cannot read or write, no
network unless its section says so — a real MCPServer through the plugin's transport
(Linux, bubblewrap)."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

import pytest
from tools_mcp_kit import SERVERS

from toolang_core import SandboxError, ToolangConfig, load_config
from toolang_core.sandbox.support import sandbox_support
from toolang_tools_mcp.connect import open_client
from toolang_tools_mcp.sandboxed import WORKDIRS
from toolang_tools_mcp.settings import ServerSettings

pytestmark = pytest.mark.skipif(
    not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().problem}"
)


def probe(**settings: object) -> ServerSettings:
    return ServerSettings(
        command=sys.executable, args=(str(SERVERS / "probe_server.py"),), **settings
    )  # type: ignore[arg-type]


async def calls(server: ServerSettings, config: ToolangConfig, *wanted: tuple[str, dict]) -> list:
    async with open_client("probe", server, config=config) as client:
        answers = []
        for name, params in wanted:
            result = await client.call_tool(name, params)
            answers.append(result.structured_content or result.content[0].text)
        return answers


def text(answer: object) -> object:
    return answer["result"] if isinstance(answer, dict) and "result" in answer else answer


@pytest.fixture
def config(toolang_home) -> ToolangConfig:
    toolang_home.write_config('# config-secret-42\n[models]\ndefault = "scripted"\n')
    return load_config(toolang_home.config_path)


def test_a_stdio_server_sees_only_its_view_and_writes_only_its_places(config, tmp_path):
    shown, written = tmp_path / "shown", tmp_path / "written"
    shown.mkdir()
    written.mkdir()
    (shown / "data").write_text("readable")
    (tmp_path / "other").write_text("private")
    server = probe(read_paths=(str(shown),), write_paths=(str(written),))
    answers = asyncio.run(
        calls(
            server,
            config,
            ("read", {"path": str(shown / "data")}),
            ("read", {"path": str(tmp_path / "other")}),
            ("read", {"path": str(config.source)}),
            ("write", {"path": str(shown / "data"), "text": "changed"}),
            ("write", {"path": str(written / "out"), "text": "out"}),
            ("where", {}),
        )
    )
    answers = [text(a) for a in answers]
    assert answers[0] == "readable"
    assert answers[1].startswith("cannot"), answers[1]  # a private /tmp
    assert "config-secret" not in str(answers[2])  # toolang.toml is hidden
    assert answers[3] == "cannot: Read-only file system"
    assert answers[4] == "written" and (written / "out").read_text() == "out"
    assert Path(answers[5]["cwd"]).parts[-2:] == (WORKDIRS, "probe")  # its own directory
    assert answers[5]["proxy"] is None  # no network by default
    assert (shown / "data").read_text() == "readable"


@pytest.mark.parametrize("network", [False, True])
def test_a_stdio_server_reaches_the_network_only_when_its_section_says_so(config, network):
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        reached, where = asyncio.run(
            calls(probe(network=network), config, ("connect", {"port": port}), ("where", {}))
        )
    finally:
        listener.close()
    assert text(reached) == "cannot: Connection refused"  # loopback is the sandbox's own
    proxy = where["proxy"]
    assert proxy == ("http://127.0.0.1:3128" if network else None), where


def test_a_place_inside_what_the_sandbox_hides_is_refused_naming_it(config):
    config.home.mkdir(parents=True, exist_ok=True)
    server = probe(read_paths=(str(config.home),))
    with pytest.raises(SandboxError, match=f"cannot show {config.home}.*never see"):
        asyncio.run(calls(server, config, ("where", {})))
