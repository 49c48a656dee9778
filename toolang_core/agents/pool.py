"""The agent pool's contract: what the core asks of a pool and what it hands one.

The pool itself — statistics kept in the execution store, health, trust, the selector,
the scheduled pings of remote agents — is a plugin (toolang-agent-pool, entry point
``agent-pool``). The core declares the ``toolang_agent_pool`` hook that provides it
and the :class:`AgentPool` protocol every caller types against: the agent catalog
asks for it (``runtime.agents.pool()``), ``ask_agent`` reports its outcome to it,
teams (toolang-teams) select and pay members through it, ``toolang agents pool``
prints it. The core also keeps calling the pool's hooks (``toolang_score_agent``,
``toolang_ping_agents``, ``toolang_agree_payment``): it hands the pool a
:class:`PoolHooks` that calls them by their rules.

A runtime with no pool plugin runs as before, less the pool: delegation works and
reports no outcome, ``toolang agents pool`` and ``runtime.agents.pool()`` say which
distribution to install (:class:`PoolNotInstalled`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from toolang_core.errors import ToolangError
from toolang_core.store.errors import StoreMissing

if TYPE_CHECKING:
    from toolang_core.agents.pool_types import PaymentTerms, PoolMember, Selection
    from toolang_core.agents.types import AgentDefinition, AgentHealth
    from toolang_core.store.types import Record

POOL_DISTRIBUTION: Final = "toolang-agent-pool"
"""The distribution that brings the agent pool (entry point ``agent-pool``)."""


class PoolNotInstalled(ToolangError):
    """No installed plugin provides the agent pool (``toolang_agent_pool``)."""

    exit_code = 2

    def __init__(self) -> None:
        super().__init__(
            "the agent pool is not installed: no plugin answers toolang_agent_pool (it comes "
            f"with {POOL_DISTRIBUTION}: pip install {POOL_DISTRIBUTION})"
        )


class PoolRecords(Protocol):
    """What a pool keeps its statistics in: the execution store's generic records
    (every :class:`~toolang_core.ExecutionStore` is one; so is :class:`NoRecordsYet`)."""

    def get_record(self, kind: str, key: str) -> Record | None: ...

    def put_record(
        self,
        kind: str,
        key: str,
        data: Mapping[str, Any],
        *,
        now: float,
        expect_revision: int | None = None,
    ) -> Record: ...


class PoolHooks(Protocol):
    """The pool's hooks as the core calls them (by their calling rules), handed to the
    pool provider: the pool never calls plugins itself."""

    def score_agent(self, member: Any, capability: str) -> float | None:
        """The first ``toolang_score_agent`` number (``None``: the pool's own score)."""
        ...

    # ``runtime`` is the RuntimeView; named Any so the contract stays out of the
    # type checker's cycle through the view (tests/test_package_graph.py).
    def ping_agents(
        self, agents: Sequence[AgentDefinition], runtime: Any
    ) -> Mapping[str, AgentHealth]:
        """Every ``toolang_ping_agents`` answer (``runtime``: the serving
        :class:`~toolang_core.RuntimeView`), merged by agent name."""
        ...

    def agree_payment(self, team_id: str, terms: Any) -> None:
        """Tell every ``toolang_agree_payment`` plugin of a member's payment terms."""
        ...


class AgentPool(Protocol):
    """What every caller may ask of a runtime's agent pool (``runtime.agents.pool()``).

    Implemented by toolang-agent-pool's ``StoredPool``; another plugin answering
    ``toolang_agent_pool`` first provides its own."""

    def members(self) -> list[PoolMember]:
        """Every callable agent as the pool sees it now, by name."""
        ...

    def get(self, name: str) -> PoolMember | None:
        """The callable agent ``name`` (``None``: no such active agent)."""
        ...

    def select(self, capability: str, n: int, *, exclude: Collection[str] = ()) -> Selection:
        """The top ``n`` agents advertising ``capability`` that are not unhealthy, best
        first, with every other agent and why it was left out."""
        ...

    def record(
        self, agent: str, *, ok: bool, latency_ms: float, error: str = "", call: str = ""
    ) -> object:
        """Count one delegation outcome of ``agent`` (safe under concurrent writers, on
        every node). ``call``: the call's idempotency key, when it has one — an outcome
        reported again under the same key (a turn resumed on another node after a crash
        runs its idempotent delegation call again) is counted once."""
        ...

    def mark_unhealthy(self, agent: str, reason: str) -> object:
        """Make ``agent`` unhealthy now without counting a call (a team member whose
        task run failed mid-task); its next success recovers it."""
        ...

    def agree_payment(self, team_id: str, terms: PaymentTerms) -> None:
        """Tell the ``toolang_agree_payment`` plugins the terms a team agreed."""
        ...


class NoRecordsYet:
    """The records of a home where nothing has run yet (no execution store): a pool
    over them reads every agent as never called, health unknown; recording an outcome
    is refused with ``reason`` (the :class:`StoreMissing` message that opening the
    store gave)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def get_record(self, kind: str, key: str) -> Record | None:
        return None

    def put_record(
        self,
        kind: str,
        key: str,
        data: Mapping[str, Any],
        *,
        now: float,
        expect_revision: int | None = None,
    ) -> Record:
        raise StoreMissing(self.reason)
