"""A configured server's tools, as toolang tools.

The settings and configuration are the runtime's (``toolang --config`` included). A
server that does not start, does not speak MCP or lists a tool with an invalid schema
is reported (an error naming the server) and left out; the other servers' tools stay.
"""

from __future__ import annotations

from collections.abc import Iterable

import structlog

from toolang_core import Tool, ToolangConfig, check_schema
from toolang_tools_mcp.listing import RemoteTool, list_tools
from toolang_tools_mcp.settings import ServerSettings

log = structlog.get_logger("toolang.tools_mcp")


class ServerToolsError(RuntimeError):
    """A server's tool list cannot be used; the message names the server and tool."""


def server_tools(name: str, server: ServerSettings, config: ToolangConfig | None) -> list[Tool]:
    """The toolang tools of one server; ``[]`` (and an error logged naming the server)
    when it cannot be listed."""
    try:
        return checked_tools(name, server, config)
    except Exception as exc:
        log.error("tools_mcp.server_unavailable", server=name, error=str(exc))
        return []


def checked_tools(
    name: str, server: ServerSettings, config: ToolangConfig | None = None
) -> list[Tool]:
    """The toolang tools of one server (a stdio one started in the sandbox ``config``
    describes).

    :raises ServerStartError: naming the server, when it does not start or answer.
    :raises ServerToolsError: naming the server and the tool whose schema is invalid.
    """
    return tools_of(name, server, list_tools(name, server, config))


def tools_of(name: str, server: ServerSettings, remotes: Iterable[RemoteTool]) -> list[Tool]:
    """The toolang tools of ``remotes``, the tools server ``name`` lists.

    :raises ServerToolsError: naming the server and the tool whose schema is invalid.
    """
    from toolang_tools_mcp.tools import make_tool

    tools = []
    for remote in remotes:
        try:
            check_schema(
                dict(remote.input_schema), where=f"MCP server {name!r}, tool {remote.name!r}"
            )
        except Exception as exc:
            raise ServerToolsError(f"{exc} (its input schema is not valid JSON Schema)") from None
        tools.append(make_tool(name, server, remote))
    return tools
