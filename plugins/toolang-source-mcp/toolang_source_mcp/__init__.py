"""toolang-source-mcp: this runtime's agents offered to MCP clients.

Each offered agent is an MCP tool ``ask_<agent>`` (input ``text``, optional ``thread``
and ``request_id``); each call is a **chat** turn request stored ``queued`` before it is
answered, found again (not submitted twice) on a retry with the same ``request_id``,
owned by the caller, cancelled when the client cancels the call. Two transports:

* ``toolang mcp serve``: stdio, for desktop clients (Claude Desktop, Claude Code …); it
  submits to the store like ``toolang chat`` and, when no runtime serves the store,
  runs each call's turn here.
* the streamable-HTTP endpoint ``/api/mcp`` on the
  runtime's one HTTP server (``toolang_register_routes``), behind the server's tokens.

The ``mcp`` SDK is imported only when a server starts: ``toolang mcp serve``, or the
HTTP endpoint's first request (as the runtime starts with ``start = "startup"``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from toolang_core import RegisterRoute, RegisterSettings, hookimpl
from toolang_source_mcp.settings import CHANNEL, NAME, MCPServeSettings

if TYPE_CHECKING:
    import click

    from toolang_core import Runtime, TurnRequest

__all__ = ["NAME", "MCPServeSettings", "settings_of"]


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(MCPServeSettings)


@hookimpl
def toolang_register_routes(register: RegisterRoute) -> None:
    from toolang_source_mcp.routes import METHODS, mcp_endpoint

    register(
        "/api/mcp",
        mcp_endpoint,
        methods=METHODS,
        name="mcp",
        summary="MCP (streamable HTTP): the offered agents as ask_<agent> tools",
        auth=True,
    )


def _serves(runtime: Runtime) -> bool:
    """Whether this run serves the HTTP endpoint: a plugin serves routes (the server,
    enabled) and the run is no one-shot chat/invoke."""
    return not runtime.one_shot and bool(runtime.route_servers())


@hookimpl
def toolang_inactive_hooks(runtime: Runtime) -> tuple[str, ...]:
    """A run that serves no endpoint has no call waiting for a turn to end."""
    return () if _serves(runtime) else ("toolang_deliver_turn",)


@hookimpl
async def toolang_startup(runtime: Runtime) -> None:
    # With start = "startup" the endpoint's MCP server is built now, in the background,
    # so no caller waits for the SDK's imports; by default the first request builds it
    # (a runtime no MCP client calls never holds the SDK in memory).
    if _serves(runtime) and settings_of(runtime).start == "startup":
        from toolang_source_mcp.routes import endpoint_of

        endpoint_of(runtime).start("startup")


@hookimpl
def toolang_deliver_turn(turn: TurnRequest, runtime: Runtime) -> None:
    # Not a delivery: the signal that an MCP call's turn ended (its terminal state is
    # committed), for the call waiting on it in this runtime.
    if turn.channel == CHANNEL:
        from toolang_source_mcp.finished import FinishedTurns

        FinishedTurns.of(runtime).delivered(turn.id)


@hookimpl
async def toolang_shutdown(runtime: Runtime, reason: str) -> None:
    # Only the routes module builds endpoints: while it is not imported (a one-shot
    # chat, a run serving no HTTP), there is nothing to stop — and no web framework to
    # import at exit.
    if "toolang_source_mcp.routes" not in sys.modules:
        return
    from toolang_source_mcp.routes import endpoint_of

    await endpoint_of(runtime).stop()


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_source_mcp.cli import serve

    group = cli.commands.get("mcp")
    if group is None:
        from toolang_source_mcp.cli import mcp

        cli.add_command(mcp)
        group = mcp
    group.add_command(serve)  # type: ignore[attr-defined]


def settings_of(runtime: Runtime) -> MCPServeSettings:
    """This runtime's ``[plugins.source-mcp]`` (defaults when absent)."""
    found: Any = runtime.settings.get(NAME)
    return found if isinstance(found, MCPServeSettings) else MCPServeSettings()
