"""Start, stop and check the configured servers with the runtime."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from toolang_core import DoctorCheck
from toolang_tools_mcp.sessions import SessionPool
from toolang_tools_mcp.settings import McpSettings

if TYPE_CHECKING:
    from toolang_core import RuntimeView, ToolOffer

PLUGIN = "tools-mcp"


def settings_of(runtime: RuntimeView) -> McpSettings:
    found = runtime.settings.get(PLUGIN)
    return found if isinstance(found, McpSettings) else McpSettings()


async def offer_server_tools(runtime: RuntimeView, tools: ToolOffer) -> None:
    """This run's tools: every configured server's, listed at once (each over a
    connection of its own; a server that cannot be listed is logged and left out).
    Later lists come over the servers' sessions (:mod:`toolang_tools_mcp.sessions`)."""
    from toolang_tools_mcp.catalog import server_tools
    from toolang_tools_mcp.settings import check_servers

    settings = settings_of(runtime)
    check_servers(settings)
    pool = runtime.plugin_state(PLUGIN, SessionPool)
    pool.offers.start(tools)
    servers = list(settings.servers.items())
    listed = await asyncio.gather(
        *(asyncio.to_thread(server_tools, name, server, runtime.config) for name, server in servers)
    )
    for (name, _), found in zip(servers, listed, strict=True):
        pool.offers.sync(name, found)


async def start_eager_servers(runtime: RuntimeView) -> None:
    """Open the sessions of the servers configured ``start = "startup"``; one that
    fails is logged and tried again on first use."""
    pool = runtime.plugin_state(PLUGIN, SessionPool)
    for name, server in settings_of(runtime).servers.items():
        if server.start == "startup":
            try:
                await pool.session(name, server, runtime.config).client()
            except Exception as exc:
                import structlog

                structlog.get_logger("toolang.tools_mcp").error(
                    "tools_mcp.start_failed", server=name, error=str(exc)
                )


async def stop_servers(runtime: RuntimeView) -> None:
    """Close every session of this runtime (stdio servers are stopped)."""
    await runtime.plugin_state(PLUGIN, SessionPool).stop()


def doctor_checks(runtime: RuntimeView) -> list[DoctorCheck]:
    """One check per configured server: it starts and lists its tools."""
    from toolang_tools_mcp.catalog import checked_tools

    checks = []
    for name, server in settings_of(runtime).servers.items():
        try:
            tools = checked_tools(name, server, runtime.config)
        except Exception as exc:
            checks.append(DoctorCheck("mcp", "fail", f"MCP server {name!r}", (str(exc),)))
            continue
        names = ", ".join(t.name for t in tools) or "no tools"
        checks.append(
            DoctorCheck("mcp", "ok", f"MCP server {name!r}: {len(tools)} tool(s)", (names,))
        )
    return checks
