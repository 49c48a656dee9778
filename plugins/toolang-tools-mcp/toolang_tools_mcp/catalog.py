"""The configured servers' tools, as toolang tools, at registration time.

Registration hooks get no configuration, so the plugin reads the one the CLI would use
(``TOOLANG_CONFIG``, then ``./toolang.toml``). A server that does not start, does not
speak MCP or lists a tool with an invalid schema is reported (an error naming the
server) and left out; the other servers' tools stay.
"""

from __future__ import annotations

import structlog

from toolang_core import (
    Tool,
    ToolangConfig,
    check_schema,
    find_config,
    load_config,
    plugin_settings,
)
from toolang_tools_mcp.listing import list_tools
from toolang_tools_mcp.settings import McpSettings, ServerSettings

log = structlog.get_logger("toolang.tools_mcp")


class ServerToolsError(RuntimeError):
    """A server's tool list cannot be used; the message names the server and tool."""


def configured_settings() -> tuple[McpSettings, ToolangConfig] | None:
    """``[plugins.tools-mcp]`` of the configuration in use and that configuration, or
    ``None`` when there is none or it does not load (the core reports a broken
    configuration itself)."""
    try:
        path = find_config()
        if path is None:
            return None
        config = load_config(path)
        return plugin_settings(config, "tools-mcp", McpSettings), config
    except Exception as exc:  # the core reports the configuration's errors
        log.debug("tools_mcp.no_config", error=str(exc))
        return None


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
    from toolang_tools_mcp.tools import make_tool

    tools = []
    for remote in list_tools(name, server, config):
        try:
            check_schema(
                dict(remote.input_schema), where=f"MCP server {name!r}, tool {remote.name!r}"
            )
        except Exception as exc:
            raise ServerToolsError(f"{exc} (its input schema is not valid JSON Schema)") from None
        tools.append(make_tool(name, server, remote))
    return tools
