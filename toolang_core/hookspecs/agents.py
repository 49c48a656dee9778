"""Agent registry hooks: sources of agent definitions, routing between agents, and the
agent pool (its provider, and the score, ping and payment hooks it is handed)."""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import (
    BEST_SCORE,
    BROADCAST,
    FIRST_ANSWER,
    FIRST_NUMBER,
    FOLD,
    MERGE,
    REGISTRATION,
    calling_rule,
)
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.agents.pool import AgentPool, PoolHooks, PoolRecords
    from toolang_core.agents.pool_types import PaymentTerms, PoolMember
    from toolang_core.agents.routing import RouteProposal
    from toolang_core.agents.types import AgentDefinition, AgentHealth, AgentSource
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.store.types import TurnRequest


@calling_rule(REGISTRATION)
@hookspec
def toolang_agent_sources() -> AgentSource | Iterable[AgentSource] | None:
    """Return the agent-definition sources this plugin provides.

    Return one :class:`~toolang_core.agents.AgentSource`, an iterable of them, or
    ``None``. Each source is labelled ``builtin``, ``embedded``, ``user`` or
    ``remote``; the registry merges their definitions by that precedence. Do no I/O
    here: the registry calls ``source.load(context)`` when it needs the definitions.
    """


@calling_rule(FOLD)
@hookspec
def toolang_build_agent(
    definition: AgentDefinition, request: TurnRequest, runtime: RuntimeView
) -> AgentDefinition | Awaitable[AgentDefinition | None] | None:
    """Build the agent for one request: e.g. a tenant's instruction, model or tools.

    Called before each turn's prompt is built, with the agent the registry resolved for
    ``request`` (a :class:`~toolang_core.store.TurnRequest`: its ``owner``, ``meta``,
    ``thread_id``). Return a changed copy (``attrs.evolve(definition, ...)``; later
    plugins see it) or ``None`` to leave it. Within the registry's limits only: the
    ``name``, ``prefixes``, ``sandbox`` and ``status`` stay as they are; ``tools``,
    when changed, *narrows* the agent's scope (names or ``prefix*`` patterns, each in
    the scope); ``max_steps``, ``max_delegation_rounds`` and ``context_tokens`` may only
    go down. An answer outside these limits, or a plugin that raises, fails the turn
    (``agent_error``, naming the plugin): a tenant never gets the generic agent by
    accident. The turn's ``prompt_build`` step lists the plugins that changed it.
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


@calling_rule(FIRST_ANSWER, awaited=False)
@hookspec
def toolang_agent_pool(
    runtime: RuntimeView, records: PoolRecords, hooks: PoolHooks
) -> AgentPool | None:
    """Provide ``runtime``'s agent pool over ``records``.

    Called whenever the core or a plugin asks for the pool (``runtime.agents.pool()``:
    ``ask_agent`` reporting an outcome, a team forming, ``toolang agents pool``).
    ``records`` is the execution store (or, before anything ran, records that read
    nothing and refuse writes); ``hooks`` calls ``toolang_score_agent``,
    ``toolang_ping_agents`` and ``toolang_agree_payment`` by their rules — use it
    rather than calling plugins. Return an object with the methods of
    :class:`~toolang_core.AgentPool`, or ``None``. The first answer is the pool; a
    plugin that raises refuses it (the caller's error names the plugin). With no
    answer there is no pool: delegation reports no outcome and ``toolang agents
    pool`` says to install toolang-agent-pool, which implements this hook.
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

    Called for the agent pool (toolang-agent-pool) on a schedule — the serving
    runtime's upkeep, at most every ``[plugins.agent-pool] ping_seconds`` — with every
    active remote agent, from a worker thread (blocking I/O is fine; answer within a
    few seconds). Return the health of the agents you can check, by name (state ``ok``
    or ``unreachable``, a detail, when checked), or ``None``. The answers of every
    plugin are merged; an agent nobody answers for keeps what the pool knew.
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
