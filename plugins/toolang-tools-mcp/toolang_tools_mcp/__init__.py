"""toolang-tools-mcp: the tools of MCP servers as toolang tools.

Each server of ``[plugins.tools-mcp.servers.<name>]`` is asked for its tools when the
plugin registers its tools; each becomes ``<prefix><tool>`` and every call goes through
the whole tool-call chain. Servers run in one session per runtime (see
:mod:`toolang_tools_mcp.sessions`). See docs/mcp.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING

import structlog

from toolang_core import AskApproval, RegisterSettings, RegisterTool, hookimpl
from toolang_tools_mcp.settings import McpSettings, check_servers

if TYPE_CHECKING:
    import click

    from toolang_core import DoctorCheck, RuntimeView, ToolCall, ToolCallContext

NAME = "tools-mcp"
log = structlog.get_logger("toolang.tools_mcp")


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(McpSettings)


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    from toolang_tools_mcp.catalog import configured_settings, server_tools

    found = configured_settings()
    if found is None:
        return
    settings, config = found
    check_servers(settings)
    for name, server in settings.servers.items():
        for tool in server_tools(name, server, config):
            register(tool)


@hookimpl
def toolang_filter_tool_call(call: ToolCall, ctx: ToolCallContext) -> AskApproval | None:
    """Ask a person before a call the server's approval rule names (by default, the
    tools the server annotates ``destructiveHint``)."""
    from toolang_tools_mcp.tools import McpToolFunction

    registered = ctx.runtime.components.tools.get(call.name) if ctx.runtime else None
    function = registered.tool.function if registered is not None else None
    if isinstance(function, McpToolFunction) and function.needs_approval:
        why = "destructive" if function.remote.destructive else "configured"
        return AskApproval(
            reason=f"MCP server {function.server!r}: tool {function.remote.name!r} is {why}",
            rule=f"tools-mcp:{function.server}",
        )
    return None


@hookimpl
def toolang_startup(runtime: RuntimeView) -> Awaitable[None] | None:
    from toolang_tools_mcp.lifecycle import start_eager_servers

    return start_eager_servers(runtime)


@hookimpl
def toolang_shutdown(runtime: RuntimeView, reason: str = "stop") -> Awaitable[None] | None:
    from toolang_tools_mcp.lifecycle import stop_servers

    return stop_servers(runtime)


@hookimpl
def toolang_doctor_checks(runtime: RuntimeView) -> Iterable[DoctorCheck] | None:
    from toolang_tools_mcp.lifecycle import doctor_checks

    return doctor_checks(runtime)


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_tools_mcp.cli import add_list_command

    add_list_command(cli)
