"""``[plugins.source-mcp]``: which agents are offered to MCP clients, and how long a
call waits."""

from __future__ import annotations

import re
from typing import Literal

import attrs

NAME = "source-mcp"
CHANNEL = "mcp"
"""The channel of every MCP call's turn."""

_AGENT = re.compile(r"^[A-Za-z0-9_\-]{1,60}$")


@attrs.frozen
class MCPServeSettings:
    """``[plugins.source-mcp]``.

    ``agents``: the agents offered, one tool ``ask_<agent>`` each (empty: the
    ``[agents] default`` agent). ``wait_seconds``: how long one call waits for its turn
    to end before it answers with the turn's state (the turn keeps its place; the same
    call again, with the same ``request_id``, waits on). ``approval_wait_seconds``: how
    long a call whose turn waits for a person's approval reports progress and waits
    before it answers ``waiting for approval <id>``. ``poll_seconds``: how often a call
    looks at the store for its turn when nothing signals its end (``toolang mcp
    serve``). ``served_poll_seconds``: the same inside the serving runtime (the HTTP
    endpoint), where a turn's end wakes its call at once and the store is looked at
    only for what is not signalled (an approval asked, a turn ended by another
    process). ``json_response``: the HTTP endpoint answers each call with one JSON body
    instead of an SSE stream (the SDK's ``json_response``): less work per call, but no
    progress notifications (a call waiting for approval is not told so before it
    answers ``waiting for approval <id>``); cancel, retries and owners are unchanged.
    ``start``: when the HTTP endpoint's MCP server is built — ``first_use`` (default:
    by the first request, which waits for the SDK's imports, about a second; a runtime
    no MCP client calls never loads the SDK, some 50 MB resident) or ``startup`` (in
    the background as the runtime starts, so no caller waits).
    """

    agents: list[str] = attrs.field(factory=list)
    wait_seconds: float = 300.0
    approval_wait_seconds: float = 60.0
    poll_seconds: float = 0.05
    served_poll_seconds: float = 0.5
    json_response: bool = False
    start: Literal["first_use", "startup"] = "first_use"

    def __attrs_post_init__(self) -> None:
        problems = [
            f"agents: {name!r} is no agent name (letters, digits, '_' and '-')"
            for name in self.agents
            if not _AGENT.match(name)
        ]
        if (
            self.wait_seconds <= 0
            or self.approval_wait_seconds < 0
            or self.poll_seconds <= 0
            or self.served_poll_seconds <= 0
        ):
            problems.append(
                "wait_seconds, poll_seconds and served_poll_seconds must be > 0, "
                "approval_wait_seconds >= 0"
            )
        if problems:
            raise ValueError("; ".join(problems))
