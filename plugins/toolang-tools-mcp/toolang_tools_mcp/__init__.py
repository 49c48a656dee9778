"""toolang-tools-mcp: the tools of MCP servers as toolang tools.

Each server of ``[plugins.tools-mcp.servers.<name>]`` (of the runtime's configuration)
is asked for its tools when a runtime starts serving, and again when it says its list
changed; each becomes ``<prefix><tool>``, offered through ``toolang_offer_tools``, and
every call goes through the whole tool-call chain. Servers run in one session per
runtime (see :mod:`toolang_tools_mcp.sessions`). See docs/mcp.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING

import structlog

from toolang_core import RegisterSettings, hookimpl
from toolang_tools_mcp.settings import McpSettings

if TYPE_CHECKING:
    import click

    from toolang_core import DoctorCheck, RuntimeView, ToolOffer

NAME = "tools-mcp"
log = structlog.get_logger("toolang.tools_mcp")


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(McpSettings)


def _has_servers(runtime: RuntimeView) -> bool:
    """Whether ``[plugins.tools-mcp]`` configures a server. Without one a run offers,
    starts and stops nothing, and imports none of the session machinery (every
    one-shot ``toolang chat`` runs these hooks)."""
    return bool(runtime.settings_for(NAME, McpSettings).servers)


@hookimpl
def toolang_offer_tools(runtime: RuntimeView, tools: ToolOffer) -> Awaitable[None] | None:
    if not _has_servers(runtime):
        return None
    from toolang_tools_mcp.lifecycle import offer_server_tools

    return offer_server_tools(runtime, tools)


@hookimpl
def toolang_reports_turn_events(runtime: RuntimeView) -> tuple[str, ...]:
    """A run with servers configured publishes their progress as ``tool.progress``."""
    from toolang_tools_mcp.progress import KIND

    return (KIND,) if runtime.settings_for(NAME, McpSettings).servers else ()


@hookimpl
def toolang_startup(runtime: RuntimeView) -> Awaitable[None] | None:
    if not _has_servers(runtime):
        return None
    from toolang_tools_mcp.lifecycle import start_eager_servers

    return start_eager_servers(runtime)


@hookimpl
def toolang_shutdown(runtime: RuntimeView, reason: str = "stop") -> Awaitable[None] | None:
    if not _has_servers(runtime):
        return None
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
