"""The agent pool: health and performance of every callable agent, and the selector.

Statistics live in the execution store as generic records (kind ``agent_pool``, one
per agent), so they survive restarts and every runtime on one shared store (PostgreSQL)
sees and updates the same pool. Every delegation reports its outcome here: task runs
(``start_task_run``, ``agent_spawn``, team work) through this plugin's task-run observer,
``ask_agent`` from the tool itself.

**Trust score** (``trust_score``), in [0, 1]::

    confidence = total_calls / (total_calls + 5)
    quality    = 0.7 * success_rate + 0.3 * min(1, latency_threshold_ms / avg_latency_ms)
    trust      = (1 - confidence) * 0.5 + confidence * quality - 0.1 * consecutive_failures

(clamped to [0, 1]): an agent never called is at a neutral 0.5, and the more calls, the
more its record counts. The selector ranks by ``score = trust * health weight``
(healthy and unknown 1, degraded 0.5) unless a ``toolang_score_agent`` plugin answers.

**Health** (:meth:`StoredPool.member`) comes from the stored outcomes
(:func:`health_of`) and a remote agent's heartbeats — the scheduled pings and the card
fetches at load, stored in the pool by whichever process made them (a process stores
its card fetch the first time it looks while it is newer than the stored heartbeat, so
every node sees one pool). A card fetch counts only once it is stored: a process that
cannot write the store (``toolang agents pool``, the doctor: read only) shows the pool
as stored, so reading the pool never changes it and every reader sees the same figures.
Nothing is cached per process: every look reads the store. The newest heartbeat
unreachable: unhealthy.

**Each call counts once.** An outcome reported with its call's idempotency key
(``record(..., call=key)``) is counted once whoever reports it again: a turn taken over
by another node after a crash runs its ``ask_agent`` call again under the same key
(delegation tools are idempotent), and the node that died may have counted it already.
The agent's record keeps the last :data:`COUNTED_CALLS` keys it counted. An agent unhealthy by its
failures is degraded only once ``recover_after`` heartbeats in a row found it since
its last failure (:attr:`AgentStats.heartbeat_streak`); nothing else lifts it, so a
person asking twice sees it recover monotonically, never back and forth.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs
import structlog

from toolang_agent_pool.stats import (
    HEALTH_WEIGHT,
    KIND,
    HealthPolicy,
    Price,
    health_of,
    trust_score,
    updated,
)
from toolang_core import (
    AgentHealth,
    AgentStats,
    Exclusion,
    PaymentTerms,
    PoolHealth,
    PoolMember,
    Selection,
)
from toolang_core.store import RecordConflict, StoreError

if TYPE_CHECKING:
    from toolang_core import AgentDefinition, PoolHooks, PoolRecords, RuntimeView

log = structlog.get_logger("toolang.pool")

Scorer = Callable[[PoolMember, str], float | None]
"""A replacement score for a member and a capability (``None``: no opinion)."""

Payments = Callable[[str, PaymentTerms], None]
"""Told of the payment terms a team (by id) agreed with one member."""

COUNTED_CALLS: Final = 128
"""How many of an agent's last counted call keys its record keeps (key ``counted``):
a call reported again within that many outcomes of the agent is not counted twice."""

Change = Callable[[AgentStats, float], AgentStats]
"""What one update makes of an agent's statistics at a time (``now``)."""


class StoredPool:
    """The pool over one store's records and a set of agents (the core's
    :class:`~toolang_core.AgentPool` protocol, and more for this plugin's own use).

    ``agents`` returns the agents that can be called (the registry's active ones);
    ``scorer`` replaces the default score when it answers (the ``toolang_score_agent``
    hook, for a runtime's pool); ``prices`` gives a price per call by agent name;
    ``heartbeat`` gives what a remote agent's source last saw of it (its card fetch):
    ``unreachable`` makes it unhealthy whatever its calls say, ``ok`` makes a
    never-called agent healthy (a local agent has no heartbeat: the runtime is it);
    ``payments`` is told of the terms a team agreed with a member (the
    ``toolang_agree_payment`` hook, for a runtime's pool); ``hooks``: the core's callers
    of the pool's hooks, for the scheduled pings (a runtime's pool).
    """

    def __init__(
        self,
        store: PoolRecords,
        agents: Callable[[], Iterable[AgentDefinition]],
        *,
        policy: HealthPolicy | None = None,
        scorer: Scorer | None = None,
        prices: Mapping[str, Price] | None = None,
        heartbeat: Callable[[str], AgentHealth | None] | None = None,
        payments: Payments | None = None,
        hooks: PoolHooks | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.agents = agents
        self.policy = policy or HealthPolicy()
        self.scorer = scorer
        self.prices = dict(prices or {})
        self.heartbeat = heartbeat
        self.payments = payments
        self.hooks = hooks
        self.clock = clock

    # -- outcomes --------------------------------------------------------------------------

    def record(
        self, agent: str, *, ok: bool, latency_ms: float, error: str = "", call: str = ""
    ) -> AgentStats:
        """Add one delegation outcome to ``agent``'s statistics; safe under concurrent
        writers (a conditional write on the record's revision, retried: no outcome is
        lost). ``call``, the call's idempotency key: an outcome already counted under
        it is not counted again (the statistics as they are are returned)."""
        return self._update(
            agent,
            lambda s, now: updated(s, ok=ok, latency_ms=latency_ms, error=error, now=now),
            call=call,
        )

    def mark_unhealthy(self, agent: str, reason: str) -> AgentStats:
        """Make ``agent`` unhealthy now without counting a call (a team member whose task
        run failed mid-task: its outcome was counted when the run finished). The next
        success recovers it."""

        def change(stats: AgentStats, now: float) -> AgentStats:
            failures = max(stats.consecutive_failures, self.policy.unhealthy_after)
            return attrs.evolve(
                stats,
                total_calls=max(stats.total_calls, 1),
                consecutive_failures=failures,
                heartbeat_streak=0,
                last_error=reason[:240],
                last_seen=now,
            )

        return self._update(agent, change)

    def beat(self, agent: str, found: AgentHealth) -> AgentStats:
        """Store what a scheduled ping of remote ``agent`` found (not a call: it counts
        no outcome; :meth:`member` weighs it against the agent's outcomes). A ping that
        reached it adds one to its streak, one that did not resets it; a ping older
        than the one stored (another runtime's, on a shared store) changes nothing."""

        def change(stats: AgentStats, now: float) -> AgentStats:
            at = found.checked_at or now
            if stats.heartbeat_at is not None and at < stats.heartbeat_at:
                return stats
            reached = found.state == "ok"
            return attrs.evolve(
                stats,
                heartbeat=found.state,
                heartbeat_at=at,
                heartbeat_detail=found.detail[:240],
                heartbeat_streak=stats.heartbeat_streak + 1 if reached else 0,
            )

        return self._update(agent, change)

    def _update(self, agent: str, change: Change, *, call: str = "") -> AgentStats:
        """``change`` applied to ``agent``'s stored statistics, written only if no other
        writer (on any node) wrote the record since it was read — else read again and
        retried, so concurrent updates all land, each on the other's result. Nothing is
        written when ``change`` changes nothing, or when ``call`` was counted already."""
        for _ in range(UPDATE_ATTEMPTS):
            current = self.store.get_record(KIND, agent)
            stats = AgentStats.from_json(current.data) if current else AgentStats(name=agent)
            counted = _counted(current.data) if current else []
            if call and call in counted:
                return stats
            now = self.clock()
            new = change(stats, now)
            if new == stats and not call:
                return stats
            data: dict[str, Any] = new.to_json()
            if call:
                counted = [*counted, call][-COUNTED_CALLS:]
            if counted:
                data["counted"] = counted
            try:
                self.store.put_record(
                    KIND,
                    agent,
                    data,
                    now=now,
                    expect_revision=current.revision if current else 0,
                )
            except RecordConflict:
                continue
            before, after = health_of(stats, self.policy), health_of(new, self.policy)
            if before is not after:
                log.info("pool.health_changed", agent=agent, before=before, after=after)
            return new
        raise RecordConflict(f"agent pool: could not update {agent!r} (too many writers)")

    def agree_payment(self, team_id: str, terms: PaymentTerms) -> None:
        """Tell the payment plugins (``payments``) that team ``team_id`` agreed ``terms``
        with one of its members; without ``payments`` nothing happens."""
        if self.payments is not None:
            self.payments(team_id, terms)

    # -- reading ---------------------------------------------------------------------------

    def stats(self, agent: str) -> AgentStats:
        record = self.store.get_record(KIND, agent)
        return AgentStats.from_json(record.data) if record else AgentStats(name=agent)

    def _last_beat(
        self, name: str, stats: AgentStats, *, own_fetch: bool
    ) -> tuple[AgentHealth | None, int]:
        """The newest heartbeat of ``name`` — its source's card fetch when this process
        loaded it (and ``own_fetch``: it may count), or the last scheduled ping stored in
        the pool (a local agent has neither) — and the heartbeats in a row that reached
        it since its last failure (the stored streak, and this process's card fetch if
        it is the newer — counted only when it is newer than the agent's last outcome
        too: a read made before a failure is no evidence that it is back)."""
        loaded = self.heartbeat(name) if self.heartbeat and own_fetch else None
        stored = stats.heartbeat_at or 0.0
        if loaded is not None and (not stats.heartbeat or (loaded.checked_at or 0.0) > stored):
            if loaded.state != "ok":
                return loaded, 0
            after = (loaded.checked_at or 0.0) > (stats.last_seen or 0.0)
            return loaded, stats.heartbeat_streak + int(after)
        if not stats.heartbeat:
            return None, 0
        reached = stats.heartbeat == "ok"
        return AgentHealth(
            "ok" if reached else "unreachable", stats.heartbeat_detail, stats.heartbeat_at
        ), (stats.heartbeat_streak)

    def _share_card_fetch(self, name: str, stats: AgentStats) -> tuple[AgentStats, bool]:
        """Store this process's card fetch of ``name`` in the pool when it is newer than
        the heartbeat stored there, so every runtime on the store sees it (one view of a
        remote agent, updated by whichever node saw it) — counted as
        :meth:`_last_beat` counts it. Returns the statistics to read from and whether
        this process's card fetch may count: on a store this process cannot write (a
        read-only CLI, a home with no store yet) it does not — ``stats`` as stored are
        what every reader sees, and reading the pool changes nothing."""
        loaded = self.heartbeat(name) if self.heartbeat else None
        if loaded is None or loaded.checked_at is None:
            return stats, True
        at = loaded.checked_at
        if stats.heartbeat and at <= (stats.heartbeat_at or 0.0):
            return stats, True

        def change(current: AgentStats, now: float) -> AgentStats:
            if current.heartbeat and at <= (current.heartbeat_at or 0.0):
                return current  # another node stored a newer one meanwhile
            reached = loaded.state == "ok"
            # a read made before the agent's last outcome is no evidence that it is back
            after = at > (current.last_seen or 0.0)
            return attrs.evolve(
                current,
                heartbeat=loaded.state,
                heartbeat_at=at,
                heartbeat_detail=loaded.detail[:240],
                heartbeat_streak=current.heartbeat_streak + int(after) if reached else 0,
            )

        try:
            return self._update(name, change), True
        except StoreError as exc:
            log.debug("pool.card_fetch_not_stored", agent=name, error=str(exc))
            return stats, False

    def member(self, definition: AgentDefinition) -> PoolMember:
        """``definition`` as the pool sees it now (health: the module docstring)."""
        stats, own_fetch = self._share_card_fetch(definition.name, self.stats(definition.name))
        price = self.prices.get(definition.name)
        health = health_of(stats, self.policy)
        beat, streak = self._last_beat(definition.name, stats, own_fetch=own_fetch)
        if beat is not None and beat.state != "ok":
            health = PoolHealth.UNHEALTHY
            stats = attrs.evolve(
                stats, last_error=f"card fetch: {beat.state} {beat.detail}".strip()
            )
        elif beat is not None:
            if health is PoolHealth.UNKNOWN:
                health = PoolHealth.HEALTHY
            elif health is PoolHealth.UNHEALTHY and streak >= self.policy.recover_after:
                # it has answered its card again and again since its last failure: worth
                # a careful try (the selector weighs degraded at half); its calls decide
                health = PoolHealth.DEGRADED
            if beat.checked_at is not None:
                stats = attrs.evolve(
                    stats,
                    last_seen=max(stats.last_seen or 0.0, beat.checked_at),
                    last_healthy=max(stats.last_healthy or 0.0, beat.checked_at),
                )
        return PoolMember(
            name=definition.name,
            source=definition.source,
            capabilities=tuple(dict.fromkeys((*definition.capabilities, *definition.skills))),
            health=health,
            stats=stats,
            trust=trust_score(stats, self.policy),
            price_per_call=price.amount if price else 0.0,
            currency=price.currency if price else "",
        )

    def members(self) -> list[PoolMember]:
        """Every callable agent, by name."""
        return sorted((self.member(d) for d in self.agents()), key=lambda m: m.name)

    def get(self, name: str) -> PoolMember | None:
        found = [d for d in self.agents() if d.name == name]
        return self.member(found[0]) if found else None

    def score(self, member: PoolMember, capability: str) -> float:
        if self.scorer is not None:
            replaced = self.scorer(member, capability)
            if replaced is not None:
                return float(replaced)
        return member.trust * HEALTH_WEIGHT[member.health]

    # -- selection -------------------------------------------------------------------------

    def select(self, capability: str, n: int, *, exclude: Collection[str] = ()) -> Selection:
        """The top ``n`` agents advertising ``capability`` that are not unhealthy, best
        score first, ties by name; every other agent in ``excluded`` with its reason."""
        wanted = capability.strip().lower()
        ranked: list[tuple[float, PoolMember]] = []
        excluded: list[Exclusion] = []
        for member in self.members():
            if member.name in exclude:
                excluded.append(Exclusion(member.name, "excluded by the caller"))
            elif wanted not in (c.lower() for c in member.capabilities):
                excluded.append(Exclusion(member.name, f"does not advertise {capability!r}"))
            elif member.health is PoolHealth.UNHEALTHY:
                excluded.append(
                    Exclusion(
                        member.name,
                        f"unhealthy ({member.stats.consecutive_failures} consecutive "
                        f"failures; last: {member.stats.last_error or 'no error text'})",
                    )
                )
            else:
                ranked.append((self.score(member, capability), member))
        ranked.sort(key=lambda pair: (-pair[0], pair[1].name))
        for score, member in ranked[max(0, n) :]:
            excluded.append(Exclusion(member.name, f"ranked below the top {n} (score {score:.3f})"))
        top = ranked[: max(0, n)]
        return Selection(
            capability=capability,
            chosen=tuple(m for _, m in top),
            scores=tuple(s for s, _ in top),
            excluded=tuple(excluded),
        )


UPDATE_ATTEMPTS: Final = 100
"""Conditional writes one update tries before giving up (each failed one means another
writer's update landed: the pool as a whole always progresses)."""


def _counted(data: Mapping[str, Any]) -> list[str]:
    """The call keys an agent's record says were counted (newest last)."""
    found = data.get("counted")
    return [str(key) for key in found] if isinstance(found, list) else []


def pool_for(runtime: RuntimeView, records: PoolRecords, hooks: PoolHooks) -> StoredPool:
    """``runtime``'s pool over ``records``: its active agents, ``[plugins.agent-pool]``'s
    policy and prices, the ``toolang_score_agent`` hook as scorer,
    ``toolang_agree_payment`` as payments (both called by the core's ``hooks``)."""
    from toolang_agent_pool.observer import PoolSettings

    registry = runtime.agents.registry
    settings = runtime.settings.get("agent-pool")
    policy, prices = None, {}
    if isinstance(settings, PoolSettings):  # [plugins.agent-pool] (this plugin's settings)
        policy = HealthPolicy(
            unhealthy_after=settings.unhealthy_after,
            max_error_rate=settings.max_error_rate,
            latency_threshold_ms=settings.latency_threshold_ms,
            recover_after=settings.recover_after,
        )
        prices = {
            name: Price(amount, settings.currency) for name, amount in settings.prices.items()
        }
    return StoredPool(
        records,
        registry.active,
        policy=policy,
        scorer=hooks.score_agent,
        prices=prices,
        heartbeat=registry.health.get,
        payments=hooks.agree_payment,
        hooks=hooks,
    )
