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

from toolang_core import RegisterSettings, RegisterTool, hookimpl
from toolang_tools_mcp.settings import McpSettings, check_servers

if TYPE_CHECKING:
    import click

    from toolang_core import DoctorCheck, RuntimeView

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
