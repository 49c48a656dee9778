"""Agent registry hooks: sources of agent definitions, and routing between agents."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.agents.routing import RouteProposal
    from toolang_core.agents.types import AgentDefinition, AgentSource


@hookspec
def toolang_agent_sources() -> AgentSource | Iterable[AgentSource] | None:
    """Return the agent-definition sources this plugin provides.

    Return one :class:`~toolang_core.agents.AgentSource`, an iterable of them, or
    ``None``. Each source is labelled ``builtin``, ``embedded``, ``user`` or
    ``remote``; the registry merges their definitions by that precedence. Do no I/O
    here: the registry calls ``source.load(context)`` when it needs the definitions.
    """


@hookspec
def toolang_route(request: str, agents: Sequence[AgentDefinition]) -> RouteProposal | None:
    """Propose which of ``agents`` should handle ``request`` (a turn's input).

    Called for turns of the default agent (the router) before its prompt is built.
    ``agents`` are the candidates: active, reachable, the router itself excluded.
    Return a :class:`~toolang_core.RouteProposal` (or an awaitable of one) naming one
    of them, or ``None`` to abstain. Every router is asked; the proposal with the
    highest score wins (on a tie, the router asked first). A router that raises is
    skipped.
    """
