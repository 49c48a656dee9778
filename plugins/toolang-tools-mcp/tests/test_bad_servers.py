"""Servers that cannot be used: each a clear error naming the server, the others kept."""

from __future__ import annotations

import pytest
from tools_mcp_kit import SERVERS, offered_tools, runtime_with, stdio_server

from toolang_tools_mcp.catalog import ServerToolsError, checked_tools
from toolang_tools_mcp.connect import ServerStartError
from toolang_tools_mcp.settings import McpSettings, ServerSettings, check_servers


def test_a_command_that_does_not_exist_is_an_error_naming_the_server():
    server = ServerSettings(command="/nonexistent/mcp-server", start_timeout_seconds=60)
    with pytest.raises(
        ServerStartError, match=r"MCP server 'ghost'.*'/nonexistent/mcp-server' is not"
    ):
        checked_tools("ghost", server)


def test_a_server_that_prints_garbage_is_an_error_naming_the_server():
    import sys

    # It never answers the handshake: the start ends at its time limit, whatever that is
    # (a short one keeps the test short; a slow machine only ends it the same way).
    server = ServerSettings(
        command=sys.executable, args=(str(SERVERS / "garbage_server.py"),), start_timeout_seconds=3
    )
    with pytest.raises(ServerStartError, match=r"MCP server 'noise'.*did not start or answer"):
        checked_tools("noise", server)


def test_a_tool_with_an_invalid_schema_is_an_error_naming_server_and_tool():
    import sys

    server = ServerSettings(command=sys.executable, args=(str(SERVERS / "bad_schema_server.py"),))
    with pytest.raises(ServerToolsError, match=r"MCP server 'odd', tool 'odd'"):
        checked_tools("odd", server)


def test_a_broken_server_leaves_the_others_tools_registered(
    toolang_runtime, toolang_home, monkeypatch, tmp_path
):
    sections = stdio_server("notes", "files_server.py", str(tmp_path / "ledger")) + (
        '[plugins.tools-mcp.servers.ghost]\ncommand = "/nonexistent/mcp-server"\n'
    )
    runtime = runtime_with(toolang_runtime, toolang_home, monkeypatch, sections)
    mine = sorted(n for n, r in offered_tools(runtime).items() if r.plugin == "tools-mcp")
    assert mine == [
        "notes_append_note",
        "notes_delete_note",
        "notes_hold",
        "notes_read_note",
        "notes_wait_here",
    ]


@pytest.mark.parametrize(
    ("server", "key"),
    [
        (ServerSettings(), "give exactly one of 'command' (stdio) or 'url' (HTTP)"),
        (ServerSettings(command="x", url="http://h/mcp"), "give exactly one of"),
        (ServerSettings(url="ftp://h"), "servers.s.url: expected an http:// or https://"),
        (ServerSettings(command="x", bearer_env="T"), "servers.s.headers/bearer_env"),
        (ServerSettings(url="http://h/mcp", args=("a",)), "servers.s.args/env/cwd"),
    ],
)
def test_an_inconsistent_server_section_names_the_key(server, key):
    with pytest.raises(ValueError, match=r"plugins\.tools-mcp\.servers\.s") as caught:
        check_servers(McpSettings(servers={"s": server}))
    assert key in str(caught.value)


def test_a_name_clash_with_another_plugins_tool_is_refused_naming_both(
    toolang_runtime, toolang_home, monkeypatch, tmp_path
):
    from toolang_core import Tool, hookimpl

    def notes_read_note(name: str) -> str:
        """Someone else's tool of the same name."""
        return name

    class Other:
        @hookimpl
        def toolang_register_tools(self, register):
            register(Tool.from_function(notes_read_note))

    runtime = runtime_with(
        toolang_runtime,
        toolang_home,
        monkeypatch,
        stdio_server("notes", "files_server.py", str(tmp_path / "ledger")),
        other=Other(),
    )
    # Offered while the runtime serves, the MCP tool is refused: the standing one stays.
    tools = offered_tools(runtime)
    assert tools["notes_read_note"].plugin == "other"  # never silently shadowed
    assert tools["notes_hold"].plugin == "tools-mcp"  # the server's other tools stay
