"""A team's values: members with roles, payment terms, the context filter, tasks.

A team is stored as one JSON record (kind ``team``) in the execution store; these
classes are its typed view, converted with cattrs at that edge. The payment terms are
the core's :class:`toolang_core.PaymentTerms` (what ``toolang_agree_payment`` plugins
receive).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Final

import attrs
import cattrs

from toolang_core import PaymentTerms

KIND: Final = "team"
"""The store record kind of a team (key: the team id)."""


class TeamError(Exception):
    """A team operation was refused or failed; the message says why."""


class TeamStatus(enum.StrEnum):
    FORMING = "forming"
    ACTIVE = "active"
    COMPLETED = "completed"
    DISBANDED = "disbanded"

    @property
    def is_final(self) -> bool:
        return self in (TeamStatus.COMPLETED, TeamStatus.DISBANDED)


class Role(enum.StrEnum):
    LEADER = "leader"
    WORKER = "worker"
    REVIEWER = "reviewer"
    OBSERVER = "observer"


class Strategy(enum.StrEnum):
    TRUST_WEIGHTED = "trust_weighted"
    MAJORITY_VOTE = "majority_vote"
    LEADER_DECIDES = "leader_decides"
    FAIL_ON_CONFLICT = "fail_on_conflict"


@attrs.frozen
class ContextFilter:
    """Which metadata keys cross the team boundary: an excluded key never does; with an
    allow-list (``allow`` not ``None``) only its keys do — ``()`` shares nothing."""

    allow: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()

    def apply(self, metadata: Mapping[str, str]) -> dict[str, str]:
        return {
            key: value
            for key, value in metadata.items()
            if key not in self.exclude and (self.allow is None or key in self.allow)
        }


@attrs.frozen
class Member:
    name: str
    role: Role
    status: str = "active"  # active | failed | left
    trust: float = 0.5
    joined_at: float = 0.0
    left_reason: str = ""


@attrs.frozen
class Candidate:
    """One worker's answer to a team task."""

    member: str
    ok: bool
    result: str = ""
    error: str = ""
    run_id: str = ""
    trust: float = 0.5
    duration_ms: float = 0.0


@attrs.frozen
class TeamTask:
    """A task delegated to the team: every candidate, the resolution and its reason."""

    id: str
    task: str
    status: str  # completed | failed
    strategy: Strategy
    candidates: tuple[Candidate, ...] = ()
    chosen: str | None = None
    chosen_member: str | None = None
    reason: str = ""
    review: str = ""


@attrs.frozen
class Team:
    id: str
    goal: str
    owner: str
    parent_thread_id: str
    leader: str
    capability: str
    strategy: Strategy
    status: TeamStatus
    created_at: float
    members: tuple[Member, ...] = ()
    payments: tuple[PaymentTerms, ...] = ()
    context_filter: ContextFilter = attrs.field(factory=ContextFilter)
    tasks: tuple[TeamTask, ...] = ()
    disbanded_reason: str = ""
    budget_tokens: int | None = None
    """Tokens every run of the team together may spend (``None``: no budget)."""

    def active(self, role: Role | None = None) -> list[Member]:
        return [
            m for m in self.members if m.status == "active" and (role is None or m.role is role)
        ]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = _converter.unstructure(self)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Team:
        return _converter.structure(dict(data), cls)


_converter = cattrs.Converter()
