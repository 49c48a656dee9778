"""A real MCP server (the SDK's MCPServer, formerly FastMCP) whose tool list changes
while it runs: ``grow`` adds a tool, ``shrink`` removes one, and each tells the client
(``notifications/tools/list_changed``)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("growing")


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool NAME that answers with its own name."""

    def made() -> str:
        return f"{name} was made at run time"

    server.add_tool(made, name=name, description=f"A tool made at run time: {name}.")
    await ctx.notify_tools_changed()
    return f"added {name}"


@server.tool()
async def shrink(name: str, ctx: Context) -> str:
    """Remove the tool NAME."""
    server.remove_tool(name)
    await ctx.notify_tools_changed()
    return f"removed {name}"


@server.tool()
def doomed() -> str:
    """A tool ``shrink`` may remove."""
    return "still here"


if __name__ == "__main__":
    server.run("stdio")
