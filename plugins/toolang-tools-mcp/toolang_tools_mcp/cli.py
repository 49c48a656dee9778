"""``toolang mcp list``: the configured servers, their state and their tools' owners.

The ``mcp`` group is shared with other plugins (``toolang mcp serve``): it is taken from
the CLI when another plugin made it, else made here.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from toolang_core.cli import CliState, pass_state

if TYPE_CHECKING:
    from toolang_core import RuntimeView


def mcp_group(cli: click.Group) -> click.Group:
    """The ``mcp`` command group of ``cli``, made when no plugin made it yet."""
    found = cli.commands.get("mcp")
    if isinstance(found, click.Group):
        return found

    @cli.group("mcp")
    def mcp() -> None:
        """MCP: servers whose tools agents use, and toolang as an MCP server."""

    return mcp


def add_list_command(cli: click.Group) -> None:
    @mcp_group(cli).command("list")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @pass_state
    def list_servers(state: CliState, as_json: bool) -> None:
        """List the configured MCP servers, their state and their tools with owners."""
        rows = server_rows(state.runtime)
        if as_json:
            click.echo(json.dumps(rows, indent=2))
            return
        if not rows:
            click.echo("no MCP servers configured ([plugins.tools-mcp.servers.<name>])")
        for row in rows:
            click.echo(f"{row['server']} ({row['transport']}): {row['state']}")
            if row.get("error"):
                click.echo(f"  error: {row['error']}")
            for tool in row["tools"]:
                flags = ", ".join(
                    f for f in ("idempotent" if tool["idempotent"] else "", tool["approval"]) if f
                )
                click.echo(f"  {tool['name']}  owner={tool['owner'] or '-'}  {flags}")


def server_rows(runtime: RuntimeView) -> list[dict[str, Any]]:
    """Each server ``runtime``'s configuration names: state (``available`` when it
    listed its tools, else ``failed`` with the error) and its tools."""
    from toolang_tools_mcp.catalog import checked_tools
    from toolang_tools_mcp.lifecycle import settings_of
    from toolang_tools_mcp.settings import check_servers
    from toolang_tools_mcp.tools import McpToolFunction

    settings, config = settings_of(runtime), runtime.config
    check_servers(settings)
    rows = []
    for name, server in settings.servers.items():
        row: dict[str, Any] = {"server": name, "transport": server.transport, "tools": []}
        try:
            tools = checked_tools(name, server, config)
        except Exception as exc:
            row.update(state="failed", error=str(exc))
            rows.append(row)
            continue
        row["state"] = "available"
        for tool in tools:
            function = tool.function
            asks = isinstance(function, McpToolFunction) and function.needs_approval
            approval = "approval" if asks else ""
            row["tools"].append(
                {
                    "name": tool.name,
                    "owner": tool.owner,
                    "idempotent": tool.idempotent,
                    "approval": approval,
                }
            )
        rows.append(row)
    return rows
