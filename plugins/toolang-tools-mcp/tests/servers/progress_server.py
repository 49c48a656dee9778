"""A real MCP server (the SDK's MCPServer) whose one tool reports its progress."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("progress")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def count_to(n: int, ctx: Context, secret: str = "") -> str:
    """Count to n, reporting each step as progress (the last step's message quotes
    ``secret``, for the redaction test)."""
    for step in range(1, n + 1):
        said = f"step {step} of {n}" + (f", token {secret}" if secret and step == n else "")
        await ctx.report_progress(step, n, said)
    return f"counted to {n}"


if __name__ == "__main__":
    server.run()
