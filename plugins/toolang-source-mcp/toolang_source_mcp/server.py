"""The MCP server: one tool ``ask_<agent>`` per offered agent, on the ``mcp`` SDK's
``MCPServer``; the same server for stdio and for the HTTP endpoint, only the way the
caller's owner is found differs."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

# Imported here, not in the functions: the SDK reads the tool function's annotations
# from this module's globals. This module is imported only when a server is built.
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations

if TYPE_CHECKING:
    from toolang_source_mcp.turns import Asker

WhoCalls = Callable[["Context[Any]"], tuple[str | None, str]]
"""``(owner, sender)`` of the call in a tool call's context."""

TOOL_PREFIX = "ask_"


def build_server(asker: Asker, who: WhoCalls) -> MCPServer:
    """The MCP server offering ``asker``'s agents; ``who`` names each call's caller."""
    import toolang_core

    server: MCPServer = MCPServer(
        name="toolang",
        version=toolang_core.__version__,
        instructions="Each ask_<agent> tool hands a message to a durable toolang agent "
        "and answers with the agent's reply. Give request_id to make a retry safe.",
        warn_on_duplicate_tools=False,
    )
    catalog = asker.runtime.agents
    for name in asker.agents():
        definition = catalog.agent(name)  # an unknown agent fails here, named
        about = definition.description or f"the toolang agent {name}"
        server.add_tool(
            _tool_for(asker, who, name),
            name=TOOL_PREFIX + name,
            description=f"Ask {about}. text: the message. thread: continue a "
            "conversation (the thread returned earlier); none starts a new one. "
            "request_id: your own key for this call, so a retry is the same turn.",
            # A turn is a side effect (it is stored, it may run tools): not read-only;
            # a retry with the same request_id is the same turn, so idempotent.
            annotations=ToolAnnotations(
                read_only_hint=False, destructive_hint=False, idempotent_hint=True
            ),
            structured_output=False,
        )
    return server


def _tool_for(asker: Asker, who: WhoCalls, agent: str) -> Callable[..., Any]:
    async def ask(
        text: str,
        ctx: Context,
        thread: str | None = None,
        request_id: str | None = None,
    ) -> CallToolResult:
        from toolang_source_mcp.turns import Refused

        owner, sender = who(ctx)
        masked = asker.runtime.redaction
        step = 0

        async def progress(message: str) -> None:
            nonlocal step
            step += 1
            await ctx.report_progress(step, None, masked.text(message))

        try:
            answer = await asker.ask(
                agent=agent,
                text=text,
                thread=thread,
                request_id=request_id,
                owner=owner,
                sender=sender,
                progress=progress,
            )
        except Refused as exc:
            return CallToolResult(
                content=[TextContent(type="text", text=masked.text(str(exc)))], is_error=True
            )
        # What the store holds is masked at rest; what the call quotes of its own
        # arguments (its request_id, its thread) is not: the whole answer is masked on
        # its way out, as every other door's is.
        return CallToolResult(
            content=[TextContent(type="text", text=masked.text(answer.text))],
            structured_content=masked.value(answer.facts),
            is_error=answer.is_error,
        )

    ask.__name__ = TOOL_PREFIX + agent
    return ask
