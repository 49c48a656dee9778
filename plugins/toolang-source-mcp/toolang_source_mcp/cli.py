"""``toolang mcp serve``: the offered agents as MCP tools over stdio.

The ``mcp`` group is shared with other MCP plugins (``toolang mcp list`` of
toolang-tools-mcp): whichever plugin registers first creates it, the others add their
commands to it.
"""

from __future__ import annotations

import click

from toolang_core.cli import CliState, pass_state


@click.group("mcp")
def mcp() -> None:
    """The Model Context Protocol: toolang's agents for MCP clients."""


@click.command("serve")
@click.option(
    "--owner",
    envvar="TOOLANG_OWNER",
    default=None,
    help="Whose conversations the calls are (default: $TOOLANG_OWNER, else none: the "
    "operator's). Another owner's thread is refused.",
)
@pass_state
def serve(state: CliState, owner: str | None) -> None:
    """Serve the offered agents ([plugins.source-mcp] agents) as MCP tools ask_<agent>
    over stdio, for a desktop client that starts this command. Each call is a durable
    chat turn in this home's store: a running `toolang run` answers it; without one,
    this process runs it."""
    import anyio

    from toolang_source_mcp import settings_of
    from toolang_source_mcp.server import build_server
    from toolang_source_mcp.turns import Asker

    runtime = state.runtime
    inbox = state.open_inbox()
    asker = Asker(runtime, settings_of(runtime), lambda: inbox)
    try:
        server = build_server(asker, lambda ctx: (owner or None, f"mcp:{owner or 'operator'}"))
    except Exception as exc:  # an agent offered that does not exist, named
        raise click.ClickException(f"[plugins.source-mcp] agents: {exc}") from None
    try:
        anyio.run(server.run_stdio_async)
    finally:
        inbox.store.close()
