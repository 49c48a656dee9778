"""Each remote tool as a toolang :class:`~toolang_core.Tool`."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs

from toolang_core import AskApproval, Tool, ToolCallContext
from toolang_tools_mcp.listing import RemoteTool
from toolang_tools_mcp.progress import reporter
from toolang_tools_mcp.results import McpToolError, convert_result
from toolang_tools_mcp.sessions import SessionPool
from toolang_tools_mcp.settings import McpSettings, ServerSettings

PLUGIN = "tools-mcp"


@attrs.frozen
class McpToolFunction:
    """Calls ``remote.name`` on server ``server``; the tool's ``function``.

    ``needs_approval``: the server's approval rule for this tool (the registered
    tool then carries :attr:`~toolang_core.Tool.asks_approval`; ``toolang mcp list``
    shows it).
    """

    server: str
    settings: ServerSettings
    remote: RemoteTool
    needs_approval: bool

    async def __call__(self, context: ToolCallContext | None = None, **params: Any) -> Any:
        if context is None or context.runtime is None:
            raise McpToolError(f"MCP tool {self.remote.name!r} needs a runtime to run in")
        pool = context.runtime.plugin_state(PLUGIN, SessionPool)
        session = pool.session(self.server, self.settings, context.runtime.config)
        client = await session.client()
        try:
            result = await client.call_tool(
                self.remote.name,
                params,
                read_timeout_seconds=self.settings.timeout_seconds,
                progress_callback=reporter(context, self.server),  # as tool.progress events
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            where = f"MCP server {self.server!r}, tool {self.remote.name!r}"
            if _timed_out(exc):
                raise McpToolError(
                    f"{where}: no answer within {self.settings.timeout_seconds:g} s "
                    "(timeout_seconds); the server was told to cancel it"
                ) from None
            if _server_answered(exc):
                raise McpToolError(f"{where}: the server refused the call: {exc}") from None
            session.lost()  # the next call starts the server again
            raise McpToolError(
                f"{where}: the connection to the server was lost during the call "
                f"({type(exc).__name__}: {exc}); it may or may not have run"
            ) from None
        await session.settled()  # a call that changed the server's tools: their new list
        cap = _settings_of(context).max_result_bytes
        return convert_result(self.server, self.remote.name, result, cap)


def _timed_out(exc: BaseException) -> bool:
    from mcp.shared.exceptions import MCPError
    from mcp_types.jsonrpc import REQUEST_TIMEOUT

    return isinstance(exc, MCPError) and exc.error.code == REQUEST_TIMEOUT


def _server_answered(exc: BaseException) -> bool:
    """Whether ``exc`` is the server's own error answer (the session still works), not
    a lost connection."""
    from mcp.shared.exceptions import MCPError
    from mcp_types.jsonrpc import CONNECTION_CLOSED

    return isinstance(exc, MCPError) and exc.error.code != CONNECTION_CLOSED


def _settings_of(context: ToolCallContext) -> McpSettings:
    found = context.runtime.settings.get(PLUGIN)
    return found if isinstance(found, McpSettings) else McpSettings()


def needs_approval(settings: ServerSettings, remote: RemoteTool) -> bool:
    """The server's approval rule for one tool (annotation, then per-tool overrides)."""
    if remote.name in settings.approve_tools:
        return True
    if remote.name in settings.no_approval_tools:
        return False
    if settings.approval == "always":
        return True
    if settings.approval == "never":
        return False
    return remote.destructive


def make_tool(server: str, settings: ServerSettings, remote: RemoteTool) -> Tool:
    """The toolang tool ``<prefix><remote tool>`` for ``remote``.

    ``readOnlyHint`` or ``idempotentHint`` make it idempotent (re-run after a crash);
    no annotation leaves it not idempotent (in doubt after a crash, never re-sent).
    """
    prefix = settings.prefix if settings.prefix is not None else f"{server}_"
    function = McpToolFunction(server, settings, remote, needs_approval(settings, remote))
    return Tool(
        name=f"{prefix}{remote.name}",
        description=remote.description,
        parameters=remote.input_schema,
        function=function,
        blocking=False,  # async: awaited inline, under the chain's time limit
        takes_context=True,
        idempotent=remote.read_only or remote.idempotent,
        owner=settings.owner,
        asks_approval=_approval(function),
    )


def _approval(function: McpToolFunction) -> AskApproval | None:
    """What the gate is told about every call of a tool the server's rule names (by
    default, the tools the server annotates ``destructiveHint``)."""
    if not function.needs_approval:
        return None
    why = "destructive" if function.remote.destructive else "configured"
    return AskApproval(
        reason=f"MCP server {function.server!r}: tool {function.remote.name!r} is {why}",
        rule=f"tools-mcp:{function.server}",
    )
