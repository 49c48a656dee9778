"""Agent registry hooks: sources of agent definitions, and routing between agents."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import (
    BEST_SCORE,
    BROADCAST,
    FIRST_NUMBER,
    MERGE,
    REGISTRATION,
    calling_rule,
)
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.agents.pool_types import PaymentTerms, PoolMember
    from toolang_core.agents.routing import RouteProposal
    from toolang_core.agents.types import AgentDefinition, AgentHealth, AgentSource
    from toolang_core.runtime_view import RuntimeView


@calling_rule(REGISTRATION)
@hookspec
def toolang_agent_sources() -> AgentSource | Iterable[AgentSource] | None:
    """Return the agent-definition sources this plugin provides.

    Return one :class:`~toolang_core.agents.AgentSource`, an iterable of them, or
    ``None``. Each source is labelled ``builtin``, ``embedded``, ``user`` or
    ``remote``; the registry merges their definitions by that precedence. Do no I/O
    here: the registry calls ``source.load(context)`` when it needs the definitions.
    """


@calling_rule(BEST_SCORE)
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


@calling_rule(FIRST_NUMBER)
@hookspec
def toolang_score_agent(member: PoolMember, capability: str) -> float | None:
    """Score a pool member for a capability, replacing the default score.

    Called by the agent pool's selector for every candidate advertising ``capability``
    that is not unhealthy. Return a number (higher is better) or ``None`` for no
    opinion; the first number answered wins (plugins registered last are asked first).
    With no answer the default is used: ``trust * health weight``.
    """


@calling_rule(MERGE, awaited=False)
@hookspec
def toolang_ping_agents(
    agents: Sequence[AgentDefinition], runtime: RuntimeView
) -> Mapping[str, AgentHealth] | None:
    """Check now whether the remote agents you provide still answer (their heartbeat).

    Called by the agent pool on a schedule — the serving runtime's upkeep, at most every
    ``[plugins.agent-pool] ping_seconds`` — with every active remote agent, from a worker
    thread (blocking I/O is fine; answer within a few seconds). Return the health of
    the agents you can check, by name (state ``ok`` or ``unreachable``, a detail, when
    checked), or ``None``. The answers of every plugin are merged; an agent nobody
    answers for keeps what the pool knew.
    """


@calling_rule(BROADCAST, awaited=False)
@hookspec
def toolang_agree_payment(team_id: str, terms: PaymentTerms) -> None:
    """Act on the payment terms a team agreed with one member (no money moves in core).

    Called by a team (the toolang-teams plugin, through the agent pool) once per member
    when a team is formed (and when a member replaces another), after the terms are
    stored and before ``team.payment.agreed`` is published. A plugin that raises is
    logged; the team goes on.
    """
