"""The pool's arithmetic: the health policy, what an agent's recorded outcomes make its
health and trust, one more outcome, a price.

The formulas are documented in :mod:`toolang_agent_pool.pool` and docs/teams.md.
"""

from __future__ import annotations

from typing import Final

import attrs

from toolang_core import AgentStats, PoolHealth

KIND: Final = "agent_pool"
"""The store record kind holding one agent's statistics (key: the agent's name)."""

WINDOW: Final = 20
"""How many recent outcomes the error rate looks at."""

HEALTH_WEIGHT: Final = {
    PoolHealth.HEALTHY: 1.0,
    PoolHealth.UNKNOWN: 1.0,
    PoolHealth.DEGRADED: 0.5,
    PoolHealth.UNHEALTHY: 0.0,
}
"""The selector's weight of each health (the score is ``trust * weight``)."""


@attrs.frozen
class HealthPolicy:
    """When an agent's outcomes make it degraded or unhealthy, and how it recovers.

    ``unhealthy_after`` consecutive failures make it unhealthy; one failure (or an error
    rate over ``max_error_rate`` in the last :data:`WINDOW` calls, once there are
    ``min_calls``), or an average latency over ``latency_threshold_ms``, degraded.

    Recovery only goes up, one step per piece of evidence: an agent unhealthy by its
    failures becomes degraded once ``recover_after`` heartbeats in a row found it
    reachable since its last failure (a careful try: the selector weighs it at half);
    a success resets the consecutive failures (degraded while the recent error rate is
    still high), and successes bring the error rate down until it is healthy. Only a
    new failure — a failed call, an unreachable heartbeat — moves it down again.
    """

    unhealthy_after: int = 3
    max_error_rate: float = 0.5
    min_calls: int = 4
    latency_threshold_ms: float = 30_000.0
    recover_after: int = 2


def health_of(stats: AgentStats, policy: HealthPolicy) -> PoolHealth:
    """The health an agent's recorded outcomes give it (see :class:`HealthPolicy`)."""
    if stats.total_calls == 0:
        return PoolHealth.UNKNOWN
    if stats.consecutive_failures >= policy.unhealthy_after:
        return PoolHealth.UNHEALTHY
    if stats.consecutive_failures > 0:
        return PoolHealth.DEGRADED
    if len(stats.recent) >= policy.min_calls and stats.error_rate > policy.max_error_rate:
        return PoolHealth.DEGRADED
    if stats.avg_latency_ms > policy.latency_threshold_ms:
        return PoolHealth.DEGRADED
    return PoolHealth.HEALTHY


def trust_score(stats: AgentStats, policy: HealthPolicy) -> float:
    """The documented trust formula (module docstring)."""
    confidence = stats.total_calls / (stats.total_calls + 5)
    speed = (
        min(1.0, policy.latency_threshold_ms / stats.avg_latency_ms)
        if stats.avg_latency_ms > 0
        else 1.0
    )
    quality = 0.7 * stats.success_rate + 0.3 * speed
    trust = (1 - confidence) * 0.5 + confidence * quality - 0.1 * stats.consecutive_failures
    return max(0.0, min(1.0, trust))


def updated(
    stats: AgentStats, *, ok: bool, latency_ms: float, error: str, now: float
) -> AgentStats:
    """``stats`` after one more outcome (running average latency, recent window)."""
    total = stats.total_calls + 1
    return attrs.evolve(
        stats,
        total_calls=total,
        successes=stats.successes + int(ok),
        consecutive_failures=0 if ok else stats.consecutive_failures + 1,
        heartbeat_streak=stats.heartbeat_streak if ok else 0,
        avg_latency_ms=stats.avg_latency_ms + (max(0.0, latency_ms) - stats.avg_latency_ms) / total,
        recent=(*stats.recent, ok)[-WINDOW:],
        last_seen=now,
        last_healthy=now if ok else stats.last_healthy,
        last_error="" if ok else error[:240],
    )


@attrs.frozen
class Price:
    """A price per call (from configuration or, for a remote agent, its card)."""

    amount: float
    currency: str = "USD"
