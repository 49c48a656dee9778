"""A real MCP server that lists a tool whose input schema is not valid JSON Schema."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("bad-schema")


@server.tool()
def odd(x: int) -> int:
    """A tool with a broken schema."""
    return x


# What a careless hand-written server might send: a type JSON Schema does not know.
server._tool_manager.get_tool("odd").parameters = {  # type: ignore[union-attr]
    "type": "object",
    "properties": {"x": {"type": "frobnicate"}},
}

if __name__ == "__main__":
    server.run()
