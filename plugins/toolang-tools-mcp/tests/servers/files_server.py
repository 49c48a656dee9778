"""A real MCP server (the SDK's MCPServer, formerly FastMCP) for the tests: a read-only
tool, a destructive one that records each run in a file, and a slow one."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("files")
LEDGER = Path(sys.argv[1]) if len(sys.argv) > 1 else None


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read_note(name: str) -> str:
    """Read a note by name."""
    return f"note {name}: hello"


@server.tool(annotations=ToolAnnotations(destructiveHint=True))
def delete_note(name: str) -> str:
    """Delete a note (records the deletion in the ledger)."""
    if LEDGER is not None:
        with LEDGER.open("a", encoding="utf-8") as handle:
            handle.write(f"deleted {name}\n")
    return f"deleted {name}"


@server.tool()
def append_note(name: str, text: str) -> dict[str, object]:
    """Append text to a note (no annotation: not idempotent)."""
    return {"name": name, "appended": len(text)}


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def wait_here(seconds: float = 600.0) -> str:
    """Write this server's pid beside the ledger, then wait (a call to cut short)."""
    import anyio

    if LEDGER is not None:
        (LEDGER.parent / "server.pid").write_text(str(os.getpid()))
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        if LEDGER is not None:  # the client's cancellation reached the server
            (LEDGER.parent / "cancelled").write_text("cancelled")
        raise
    return "waited"


@server.tool()
async def hold(seconds: float = 600.0) -> str:
    """Record a run in the ledger, write this server's pid, then wait (not idempotent)."""
    import anyio

    if LEDGER is not None:
        with LEDGER.open("a", encoding="utf-8") as handle:
            handle.write("held\n")
        (LEDGER.parent / "server.pid").write_text(str(os.getpid()))
    await anyio.sleep(seconds)
    return "held"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "http":
        server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[3]))
    else:
        server.run()
