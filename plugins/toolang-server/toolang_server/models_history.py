"""The API's typed models for history as a tool: forking a thread at a turn and
replaying a turn (``POST /api/turns/{turn_id}/fork`` and ``/replay``; see
:mod:`toolang_server.api_history`)."""

from __future__ import annotations

from typing import Any

import attrs

from toolang_server.models import MAX_WAIT, Turn
from toolang_server.schema import field, response


@attrs.frozen
class ForkBody:
    """Fork the turn's thread at this turn: a new thread with the history before it, the
    turn run again there (with ``input`` instead of its own, when given)."""

    input: str | None = field("The turn's input, edited (default: as it was).", max_len=50_000)
    agent: str | None = field("The agent the forked turn runs with.", max_len=100)
    model: str | None = field("The model the forked turn runs with.", max_len=200)
    wait: float = field(
        "Seconds to wait for the forked turn to end.", default=0.0, low=0, high=MAX_WAIT
    )


@attrs.frozen
class ReplayBody:
    """Replay the turn against another model or agent, its tool calls answered from the
    record; a call the record does not have is stopped unless ``allow_tools`` names it."""

    model: str | None = field("The model the replay runs with.", max_len=200)
    agent: str | None = field("The agent the replay runs with.", max_len=100)
    allow_tools: list[str] | None = field(
        "Tools a call the record does not have may run (through the whole hook chain)."
    )
    wait: float = field("Seconds to wait for the replay to end.", default=0.0, low=0, high=MAX_WAIT)


@response
@attrs.frozen
class ForkMade:
    """What a fork made: the new thread, its first turn, the turn forked at and the
    turns the new thread inherits (oldest first)."""

    thread_id: str
    turn_id: str
    origin: str
    at_turn: str
    inherited: list[str]


@response
@attrs.frozen
class Forked:
    """A fork, and its turn when it was waited for and has ended."""

    fork: ForkMade
    turn: Turn | None = None


@response
@attrs.frozen
class ReplayedCall:
    """One tool call the replay made and how it was answered."""

    name: str
    params: dict[str, Any]
    answer: str = field("``recorded``, ``stopped`` or ``ran`` (an allowed tool).", required=True)
    ok: bool = field(required=True)
    error: str | None = None


@response
@attrs.frozen
class Replayed:
    """How a replay went: its turn, the recorded turn's answer beside the replay's, every
    tool call, and the stopped ones apart."""

    turn_id: str
    replay_turn_id: str
    thread_id: str
    status: str
    calls: list[ReplayedCall]
    stopped: list[ReplayedCall]
    output: str | None = None
    error: str | None = None
    original_output: str | None = None
