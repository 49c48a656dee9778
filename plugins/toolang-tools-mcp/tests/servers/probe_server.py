"""A real MCP server (the SDK's MCPServer) that reports what it can see and reach: for
the tests of the sandbox stdio servers run in."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("probe")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read(path: str) -> str:
    """The text of a file, or why it cannot be read."""
    try:
        return Path(path).read_text()
    except OSError as exc:
        return f"cannot: {exc.strerror}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def write(path: str, text: str) -> str:
    """Write a file; say whether it worked."""
    try:
        Path(path).write_text(text)
    except OSError as exc:
        return f"cannot: {exc.strerror}"
    return "written"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def connect(port: int) -> str:
    """Try a TCP connection to this machine's loopback ``port``."""
    try:
        socket.create_connection(("127.0.0.1", port), 3).close()
    except OSError as exc:
        return f"cannot: {exc.strerror}"
    return "connected"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def where() -> dict[str, object]:
    """Its working directory and proxy setting."""
    return {"cwd": os.getcwd(), "proxy": os.environ.get("HTTP_PROXY")}


if __name__ == "__main__":
    server.run("stdio")
