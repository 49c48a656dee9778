"""Ask a server for its tools: once, over a connection of its own (when a run starts,
for ``toolang mcp list`` and the doctor), or over a session's open client."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import attrs

from toolang_tools_mcp.connect import ServerStartError, describe_start_failure, open_client
from toolang_tools_mcp.settings import ServerSettings


@attrs.frozen
class RemoteTool:
    """One tool as a server lists it."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    read_only: bool = False
    idempotent: bool = False
    destructive: bool = False


def list_tools(name: str, server: ServerSettings, config: Any = None) -> list[RemoteTool]:
    """Start ``server`` (a stdio one in the sandbox ``config`` describes), list its
    tools, stop it — in a thread of its own, so it works whether or not the caller runs
    an event loop.

    :raises ServerStartError: naming the server, when it does not start, does not speak
        MCP, or does not answer within ``start_timeout_seconds``.
    """
    outcome: list[list[RemoteTool] | BaseException] = []

    def work() -> None:
        import anyio

        try:
            outcome.append(anyio.run(_list, name, server, config))
        except BaseException as exc:  # reported to the caller's thread
            outcome.append(exc)

    thread = threading.Thread(target=work, name=f"tools-mcp list {name}", daemon=True)
    thread.start()
    thread.join()
    found = outcome[0]
    if isinstance(found, BaseException):
        if isinstance(found, ServerStartError):
            raise found
        raise ServerStartError(describe_start_failure(name, server, found)) from None
    return found


async def _list(name: str, server: ServerSettings, config: Any) -> list[RemoteTool]:
    import anyio

    with anyio.fail_after(server.start_timeout_seconds):
        async with open_client(name, server, config=config) as client:
            return await listed_by(client)


async def listed_by(client: Any) -> list[RemoteTool]:
    """Every tool an entered ``mcp.Client`` lists (all pages)."""
    tools: list[RemoteTool] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(remote_tool(tool) for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def remote_tool(tool: Any) -> RemoteTool:
    """The SDK's ``Tool`` as the plugin keeps it."""
    notes = tool.annotations
    return RemoteTool(
        name=tool.name,
        description=tool.description or tool.title or tool.name,
        input_schema=dict(tool.input_schema),
        read_only=bool(notes and notes.read_only_hint),
        idempotent=bool(notes and notes.idempotent_hint),
        destructive=bool(notes and notes.destructive_hint),
    )
