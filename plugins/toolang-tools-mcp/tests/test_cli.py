"""`toolang mcp list` and `toolang doctor`, real commands on a real server."""

from __future__ import annotations

import json

from tools_mcp_kit import stdio_server

ENV = {"TOOLANG_LOAD_PLUGINS": "tools-mcp"}


def configure(toolang_home, tmp_path) -> None:
    toolang_home.write_config(
        stdio_server(
            "notes", "files_server.py", str(tmp_path / "ledger"), extra='owner = "operator"'
        )
        + '[plugins.tools-mcp.servers.ghost]\ncommand = "/nonexistent/mcp-server"\n'
    )


def test_mcp_list_shows_servers_state_and_tools_with_owners(toolang_home, toolang_cli, tmp_path):
    configure(toolang_home, tmp_path)
    done = toolang_cli("mcp", "list", "--json", env=ENV, timeout=600)
    assert done.returncode == 0, done.stderr
    notes, ghost = json.loads(done.stdout)
    assert (notes["server"], notes["state"]) == ("notes", "available")
    tools = {t["name"]: t for t in notes["tools"]}
    assert tools["notes_read_note"]["owner"] == "operator"
    assert tools["notes_delete_note"]["approval"] == "approval"
    assert (ghost["state"], ghost["server"]) == ("failed", "ghost")
    assert "MCP server 'ghost'" in ghost["error"]


def test_doctor_checks_every_server_starts_and_lists_tools(toolang_home, toolang_cli, tmp_path):
    configure(toolang_home, tmp_path)
    done = toolang_cli("doctor", env=ENV, timeout=600)
    assert "MCP server 'notes': 5 tool(s)" in done.stdout, done.stdout + done.stderr
    assert "MCP server 'ghost'" in done.stdout
    assert "/nonexistent/mcp-server" in done.stdout
    assert done.returncode == 1  # the server that does not start is a problem found


def test_agents_tools_names_the_plugin_whose_tools_exist_only_while_serving(
    toolang_home, toolang_cli, tmp_path
):
    configure(toolang_home, tmp_path)
    done = toolang_cli("agents", "tools", env=ENV, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "notes_read_note" not in done.stdout  # no server is started to list them
    assert "not listed here: tools-mcp" in done.stdout
    assert "toolang mcp list" in done.stdout
