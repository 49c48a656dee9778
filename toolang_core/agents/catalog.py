"""The agents of one runtime: the merged registry, the tool assignment, routing, and
their pool (health, performance and selection: the ``toolang_agent_pool`` plugin's).

One :class:`AgentCatalog` per runtime (``runtime.agents``). The agent executor and
``toolang agents …`` both read it, so what the CLI prints is what turns run with.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import PurePath
from typing import TYPE_CHECKING

import structlog

from toolang_core.agents.partition import ToolAssignment, assign_tools, narrow_tools
from toolang_core.agents.registry import AgentRegistry
from toolang_core.plugins.live_map import LiveMap

if TYPE_CHECKING:
    from toolang_core.agents.pool import AgentPool, PoolRecords
    from toolang_core.agents.port import AgentsRuntime
    from toolang_core.agents.routing import RouteProposal
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.store.protocol import ExecutionStore

log = structlog.get_logger("toolang.agents")


UNMATCHED_FIX = (
    "no agent's prefixes cover these tools and their plugins declared no active owner; "
    "only agents granted them (tools: ['*'] or their names) can use them. Fix: declare "
    "the owner in the plugin (Tool(owner='<agent>')), claim their prefix in an agent's "
    'AGENT.md (prefixes: [...]), or set [agents] unmatched_tools = "default" to give '
    "them to the default agent"
)
"""How to make unmatched tools usable (logged at start-up and shown by doctor)."""


UNPARTITIONED = frozenset({"request_tool"})
"""Tools no agent owns: the agent loop offers ``request_tool`` to a turn narrower than
its agent's role (:mod:`toolang_core.turn.escalation`)."""


class AgentError(LookupError):
    """An agent cannot be used: unknown or disabled. The message lists the known ones."""


class AgentCatalog:
    """The registry and tool assignment of one runtime, read once on first use.

    First use may come from two threads at once (the agent executor reads the registry
    in a worker thread at start-up while the event loop builds an agent pool): the lock
    makes the second wait for the first's registry instead of reading every source
    again. Two registries would disagree: a remote agent's card fetched ``ok`` in one
    and ``unreachable`` in the other, and each pool built on them would say otherwise.
    """

    def __init__(self, runtime: AgentsRuntime) -> None:
        self.runtime = runtime
        self._registry: AgentRegistry | None = None
        self._assignment: ToolAssignment | None = None
        self._assigned_from: object = None  # the tools snapshot it was worked out from
        self._loading = threading.RLock()
        # the last answer of candidates(): (registry, assignment, router, candidates)
        self._candidates: (
            tuple[AgentRegistry, ToolAssignment, str, tuple[AgentDefinition, ...]] | None
        ) = None

    @property
    def registry(self) -> AgentRegistry:
        """Every source's definitions, merged (the sources are read once, on first use)."""
        registry = self._registry
        if registry is None:
            with self._loading:
                registry = self._registry
                if registry is None:
                    registry = self._registry = AgentRegistry.load(self.runtime)
        return registry

    @property
    def assignment(self) -> ToolAssignment:
        """Every usable tool partitioned among the active agents.

        A tool whose required runtime service is off (the memory tools while no memory
        plugin is configured) is not partitioned: no agent is offered it. Worked out
        again when the tools change (a plugin offered or withdrew one while serving)."""
        runtime = self.runtime
        tools = runtime.components.tools
        current = tools.current if isinstance(tools, LiveMap) else tools
        if self._assignment is None or self._assigned_from is not current:
            usable = {
                name: registration.tool
                for name, registration in current.items()
                if all(runtime.service_available(s) for s in registration.tool.requires)
                and name not in UNPARTITIONED
            }
            agents = runtime.config.agents
            self._assignment = assign_tools(
                usable,
                self.registry.active(),
                declared={name: t.owner for name, t in usable.items() if t.owner},
                fallback=agents.default if agents.unmatched_tools == "default" else None,
            )
            self._assigned_from = current
        return self._assignment

    def reload(self) -> None:
        """Read the sources again on next use (a changed AGENT.md, a remote back up)."""
        with self._loading:  # not lost to a load under way
            self._registry = self._assignment = None

    def report_unmatched(self) -> tuple[str, ...]:
        """Log the tools no agent owns (at start-up) and return them. With no agent
        source installed (single-agent mode) nothing is partitioned and nothing logged."""
        unmatched = self.assignment.unmatched
        if unmatched and self.registry.reports:
            log.warning(
                "agents.unmatched_tools",
                tools=list(unmatched),
                hint=UNMATCHED_FIX,
            )
        return unmatched

    def agent(self, name: str | None) -> AgentDefinition:
        """The named active agent (``None``: ``[agents] default``).

        :raises AgentError: naming the agent, whether it is unknown or disabled, and
            the active agents.
        """
        wanted = name or self.runtime.config.agents.default
        found = self.registry.get(wanted)
        if found is not None and found.status == "active":
            return found
        known = ", ".join(d.name for d in self.registry.active()) or "none"
        state = "disabled" if found is not None else "unknown"
        which = " ([agents] default; `toolang doctor` explains)" if not name else ""
        message = f"agent {wanted!r}{which} is {state} (agents: {known})"
        # the agent a person just wrote may be one whose AGENT.md did not load
        errors = self.registry.errors if found is None else ()
        broken = [d for d in errors if wanted in PurePath(d.origin).parts]
        if broken:
            message += f"; {broken[0]} (`toolang agents status` lists every problem)"
        raise AgentError(message)

    def scope(
        self, agent: AgentDefinition, allowed_tools: Iterable[str] | None = None
    ) -> frozenset[str]:
        """The tools ``agent`` may use, narrowed by spawn-time ``allowed_tools``.

        :raises ToolScopeError: when ``allowed_tools`` reaches outside the scope.
        """
        return narrow_tools(self.assignment.scope(agent.name), allowed_tools, agent=agent.name)

    def idle_reason(self, agent: AgentDefinition) -> str | None:
        """Why ``agent`` has nothing to act with, or ``None`` when it can act.

        An agent is *idle* when it declares a tool scope (``prefixes`` or ``tools``: a
        role meant to act on something) and no usable tool falls in it — the vault
        before any ``secrets_*``/``crypto_*`` tool is installed. Idle agents are not
        offered to routing or delegation: handed "encrypt this password", they could
        only say they cannot. An agent that declares no scope at all reasons only (the
        planner, a reviewer) and is never idle; nor is the default agent, which answers
        whatever is not delegated.
        """
        if agent.name == self.runtime.config.agents.default or not (agent.prefixes or agent.tools):
            return None
        if self.assignment.scope(agent.name):
            return None
        scope = ", ".join((*agent.prefixes, *agent.tools))
        return (
            f"no installed tool falls in its tool scope ({scope}); install the plugin "
            "that provides them (`toolang agents tools` lists every tool's owner)"
        )

    def delegate(self, name: str) -> AgentDefinition:
        """The active agent ``name``, for delegated work (routing, ``ask_agent``,
        ``transfer_to_agent``, task runs, teammates).

        :raises AgentError: as :meth:`agent`, and when the agent is idle
            (:meth:`idle_reason`), saying why.
        """
        found = self.agent(name)
        reason = self.idle_reason(found)
        if reason is not None:
            raise AgentError(
                f"agent {found.name!r} has nothing to act with: {reason}; delegate to "
                "another agent or answer directly"
            )
        return found

    def candidates(self, router: str) -> tuple[AgentDefinition, ...]:
        """The agents a request may be routed to: active, reachable, not idle
        (:meth:`idle_reason`), not the router.

        A registry is frozen (a reload makes a new one) and so is a tool assignment, so
        the answer is worked out once per registry, assignment and router: every turn
        of the router asks the same."""
        registry = self.registry
        assignment = self.assignment
        last = self._candidates
        if last is not None and last[0] is registry and last[1] is assignment and last[2] == router:
            return last[3]
        health = registry.health
        found = tuple(
            d
            for d in registry.active()
            if d.name != router
            and (d.name not in health or health[d.name].state == "ok")
            and self.idle_reason(d) is None
        )
        self._candidates = (registry, assignment, router, found)
        return found

    async def route(self, request: str, router: str) -> RouteProposal | None:
        """Ask the ``toolang_route`` implementations which agent fits ``request``."""
        candidates = self.candidates(router)
        if not candidates:
            return None
        proposal, _ = await self.runtime.hooks.route(request, candidates)
        return proposal

    def pool(self, store: ExecutionStore | PoolRecords | None = None) -> AgentPool:
        """The agent pool of these agents over ``store`` (default: the store the runtime
        serves), from the ``toolang_agent_pool`` plugin: health, performance, trust and
        selection by capability, scored by the ``toolang_score_agent`` hooks, payment
        terms told to ``toolang_agree_payment``.

        :raises RuntimeError: with no ``store`` while the runtime does not serve.
        :raises PoolNotInstalled: when no plugin provides the pool (it names the
            distribution to install).
        """
        from toolang_core.agents.pool import PoolNotInstalled

        found = self._pool(store)
        if found is None:
            raise PoolNotInstalled()
        return found

    def report_outcome(
        self, agent: str, *, ok: bool, latency_ms: float, error: str = "", call: str = ""
    ) -> None:
        """Tell the agent pool how a delegation to ``agent`` went, over the store the
        runtime serves (``call``: the call's idempotency key — reported again, it
        counts once); without a pool plugin, nothing happens."""
        found = self._pool(None)
        if found is not None:
            found.record(agent, ok=ok, latency_ms=latency_ms, error=error, call=call)

    def _pool(self, store: ExecutionStore | PoolRecords | None) -> AgentPool | None:
        used = store or self.runtime.store
        if used is None:
            raise RuntimeError("the agent pool needs a store: pass one or serve the runtime")
        hooks = self.runtime.hooks
        pool: AgentPool | None = hooks.agent_pool(self.runtime, used, hooks)
        return pool
