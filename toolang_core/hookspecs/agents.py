"""Agent registry hooks: sources of agent definitions, and routing between agents."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.agents.pool_types import PoolMember
    from toolang_core.agents.routing import RouteProposal
    from toolang_core.agents.types import AgentDefinition, AgentSource
    from toolang_core.teams.types import PaymentTerms


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


@hookspec
def toolang_score_agent(member: PoolMember, capability: str) -> float | None:
    """Score a pool member for a capability, replacing the default score.

    Called by the agent pool's selector for every candidate advertising ``capability``
    that is not unhealthy. Return a number (higher is better) or ``None`` for no
    opinion; the first number answered wins (plugins registered last are asked first).
    With no answer the default is used: ``trust * health weight``.
    """


@hookspec
def toolang_agree_payment(team_id: str, terms: PaymentTerms) -> None:
    """Act on the payment terms a team agreed with one member (no money moves in core).

    Called once per member when a team is formed (and when a member replaces another),
    after the terms are stored and before ``team.payment.agreed`` is published. A
    plugin that raises is logged; the team goes on.
    """
