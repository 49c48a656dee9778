"""The agent pool's values: health, performance, a member, a selection, and the payment
terms a team agrees with a member — the types the pool's hooks and the
:class:`~toolang_core.agents.pool.AgentPool` protocol pass (the pool itself is the
toolang-agent-pool plugin).

A pool member is any callable agent — a local one of the registry or, once remote
agents are callable, a remote one: both are tracked from the outcomes of the calls
made to them (and a remote one also from its card fetches), so the selector treats
them alike.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Final

import attrs


class PoolHealth(enum.StrEnum):
    """An agent's health in the pool (unhealthy agents are never selected)."""

    HEALTHY = "healthy"
    DEGRADED = "degraded"
    UNHEALTHY = "unhealthy"
    UNKNOWN = "unknown"


@attrs.frozen
class AgentStats:
    """What the pool stored about one agent (the record's data; the pool plugin's
    health policy says what the numbers make it)."""

    name: str
    total_calls: int = 0
    successes: int = 0
    consecutive_failures: int = 0
    avg_latency_ms: float = 0.0
    recent: tuple[bool, ...] = ()
    last_seen: float | None = None
    last_healthy: float | None = None
    last_error: str = ""
    heartbeat: str = ""
    """What the last scheduled ping of a remote agent found (``ok``, ``unreachable``;
    empty: never pinged — the card fetch at load is all the pool knows)."""
    heartbeat_at: float | None = None
    heartbeat_detail: str = ""
    heartbeat_streak: int = 0
    """Heartbeats in a row that found it reachable since its last failure (a failed
    call, an unreachable heartbeat, a team marking it unhealthy: each resets it)."""

    @property
    def success_rate(self) -> float:
        return self.successes / self.total_calls if self.total_calls else 0.0

    @property
    def error_rate(self) -> float:
        """Failures among the recent outcomes."""
        return (len(self.recent) - sum(self.recent)) / len(self.recent) if self.recent else 0.0

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        data["recent"] = [int(ok) for ok in self.recent]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AgentStats:
        fields = {f.name for f in attrs.fields(cls)}
        values = {k: v for k, v in data.items() if k in fields}
        values["recent"] = tuple(bool(ok) for ok in data.get("recent", ()))
        return cls(**values)


@attrs.frozen
class PoolMember:
    """One agent as the pool sees it: what it advertises, its health, its numbers."""

    name: str
    source: str
    capabilities: tuple[str, ...]
    health: PoolHealth
    stats: AgentStats
    trust: float
    price_per_call: float = 0.0
    currency: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "capabilities": list(self.capabilities),
            "health": self.health.value,
            "trust": round(self.trust, 4),
            "price_per_call": self.price_per_call,
            "currency": self.currency,
            "avg_latency_ms": round(self.stats.avg_latency_ms, 1),
            "success_rate": round(self.stats.success_rate, 4),
            "total_calls": self.stats.total_calls,
            "consecutive_failures": self.stats.consecutive_failures,
            "last_seen": self.stats.last_seen,
            "last_healthy": self.stats.last_healthy,
            "last_error": self.stats.last_error,
            "heartbeat": self.stats.heartbeat,
            "heartbeat_at": self.stats.heartbeat_at,
            "heartbeat_streak": self.stats.heartbeat_streak,
        }


@attrs.frozen
class Exclusion:
    """An agent the selector left out, and why (a sentence for a person)."""

    name: str
    reason: str


@attrs.frozen
class Selection:
    """The selector's answer: the chosen members best first, and who was left out."""

    capability: str
    chosen: tuple[PoolMember, ...]
    scores: tuple[float, ...]
    excluded: tuple[Exclusion, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "capability": self.capability,
            "chosen": [
                {"name": m.name, "score": round(s, 4), "health": m.health.value}
                for m, s in zip(self.chosen, self.scores, strict=True)
            ],
            "excluded": [{"name": e.name, "reason": e.reason} for e in self.excluded],
        }


POSTPAY_TRUST: Final = 0.8
"""A member trusted at least this much is paid after the work (``postpay``)."""


@attrs.frozen
class PaymentTerms:
    """What one team member's work costs (recorded; no money moves in core): what a
    team (toolang-teams) agrees with each paid member and hands every
    ``toolang_agree_payment`` plugin."""

    member: str
    mode: str
    price_per_use: float = 0.0
    currency: str = ""
    max_uses: int | None = None
    valid_from: float = 0.0
    valid_until: float | None = None

    @classmethod
    def agree(
        cls,
        member: str,
        *,
        price: float,
        currency: str,
        trust: float,
        now: float,
        max_uses: int | None = None,
        valid_seconds: float | None = None,
    ) -> PaymentTerms:
        """``free`` at price 0, ``postpay`` at trust ≥ :data:`POSTPAY_TRUST`, else ``prepay``."""
        mode = "free" if price <= 0 else "postpay" if trust >= POSTPAY_TRUST else "prepay"
        return cls(
            member=member,
            mode=mode,
            price_per_use=max(0.0, price),
            currency=currency,
            max_uses=max_uses,
            valid_from=now,
            valid_until=now + valid_seconds if valid_seconds is not None else None,
        )
