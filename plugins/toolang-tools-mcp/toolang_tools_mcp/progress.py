"""An MCP server's ``notifications/progress`` during a tool call, as turn events.

Each notification the server sends for a call in flight becomes one ``tool.progress``
event on the runtime's event bus (``toolang_on_event``), with the turn's ids: every
subscriber sees it (the event publisher's sinks, the toolang server, which shows it on
the turn's event stream and in the console's trace). The server's message is
untrusted text: it is masked with the runtime's redaction policy and cut to
``MAX_MESSAGE_CHARS`` before it is published.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final

import structlog

if TYPE_CHECKING:
    from toolang_core import Event, ToolCallContext

KIND: Final = "tool.progress"
MAX_MESSAGE_CHARS: Final = 500

log = structlog.get_logger("toolang.tools_mcp")


def progress_event(
    context: ToolCallContext,
    server: str,
    progress: float,
    total: float | None,
    message: str | None,
) -> Event:
    """The ``tool.progress`` event for one notification of the call in ``context``."""
    data: dict[str, Any] = {
        "server": server,
        "progress": _number(progress),
        "total": _number(total),
        "message": None,
    }
    if message:
        # Masked whole, then cut: a secret cut in two could escape the detectors.
        data["message"] = context.runtime.redaction.text(message)[:MAX_MESSAGE_CHARS]
    return context.event(KIND, data)


def _number(value: float | None) -> float | None:
    """A JSON-able number (a server may send anything the SDK parses as a float)."""
    if value is None or not math.isfinite(value):
        return None
    return int(value) if float(value).is_integer() else value


def reporter(context: ToolCallContext, server: str) -> Any:
    """The SDK's ``progress_callback`` for one call: each notification published."""

    async def report(progress: float, total: float | None, message: str | None) -> None:
        try:
            event = progress_event(context, server, progress, total, message)
            failures = await context.runtime.publish(event)
        except Exception as exc:  # progress is information: it never fails the call
            log.warning("tools_mcp.progress_not_delivered", server=server, error=repr(exc))
            return
        for failure in failures:  # a subscriber's failure never fails the call either
            log.warning(
                "tools_mcp.progress_not_delivered",
                server=server,
                tool=context.call.name,
                plugin=failure.plugin,
                error=failure.error,
            )

    return report
