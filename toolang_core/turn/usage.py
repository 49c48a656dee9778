"""Token usage of a turn's model calls, and the spend limits that stop it.

    before each model call:   limits reached?  → the turn ends, nothing more is called
    after a call's answer:    count its usage; limits reached and tools asked for?
                              → the turn ends before any of those tools runs

A turn is held to ``[limits]`` (narrowed by its request's ``meta["limits"]``), to its
owner's daily tokens, and to the spend budget its request draws on
(``meta["budget"]``, e.g. a team's). The turn counts its own model calls itself (some
are not stored yet when it checks); what other turns spent is read from the execution
store (:meth:`~toolang_core.store.protocol.ExecutionStore.usage`), only when an owner
or budget limit applies — with no limit configured nothing is read or counted.

A limit reached ends the turn ``failed`` with outcome :data:`USAGE_LIMIT` (its own
limits, the owner's day) or :data:`BUDGET_EXCEEDED` (the budget), and an error naming
the limit and the figures. See docs/spend-limits.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

import attrs

from toolang_core.spend import (
    BUDGET_EXCEEDED,
    USAGE_LIMIT,
    SpendBudget,
    day_start,
    token_count,
)
from toolang_core.store.usage import Usage, UsageFilter

if TYPE_CHECKING:
    from toolang_core.config.spend import LimitsConfig
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.store.types import TurnRequest

# -- one turn's limits ------------------------------------------------------------------


@attrs.frozen
class SpendLimits:
    """The limits one turn is held to (``None``: no such limit)."""

    max_tokens_per_turn: int | None = None
    max_model_calls: int | None = None
    owner_daily_tokens: int | None = None
    budget: SpendBudget | None = None

    @property
    def any(self) -> bool:
        return (
            self.max_tokens_per_turn is not None
            or self.max_model_calls is not None
            or self.owner_daily_tokens is not None
            or self.budget is not None
        )

    @classmethod
    def for_turn(cls, config: LimitsConfig, turn: TurnRequest) -> SpendLimits:
        """``[limits]`` narrowed by the request's ``meta["limits"]`` (the lower of the
        two wins) and the budget its ``meta["budget"]`` names."""
        meta = turn.meta
        asked = meta.get("limits")
        if asked is None and meta.get("budget") is None and not _configured(config):
            return NO_LIMITS  # most turns: nothing to narrow, no budget
        asked = asked if isinstance(asked, Mapping) else {}
        return cls(
            _lower(config.max_tokens_per_turn, asked.get("max_tokens_per_turn")),
            _lower(config.max_model_calls, asked.get("max_model_calls")),
            config.owner_daily_tokens,
            SpendBudget.from_meta(turn.meta.get("budget")),
        )


NO_LIMITS: Final = SpendLimits()
"""The limits of a turn held to none (shared: the value is frozen)."""


def _configured(config: LimitsConfig) -> bool:
    """Whether ``[limits]`` sets any limit a turn is held to."""
    return (
        config.max_tokens_per_turn is not None
        or config.max_model_calls is not None
        or config.owner_daily_tokens is not None
    )


def _lower(configured: int | None, asked: object) -> int | None:
    wanted = token_count(asked)
    if wanted is None or wanted < 1:
        return configured
    return wanted if configured is None else min(configured, wanted)


@attrs.frozen
class Stop:
    """A limit reached: the turn's outcome and the message its user sees."""

    outcome: str
    message: str
    limit: str
    spent: int
    allowed: int


class TurnSpend:
    """What one turn spent so far and the limits it is held to. Shared by every agent
    loop of the turn (its own, each ``ask_agent`` specialist's): they all count here."""

    def __init__(
        self,
        limits: SpendLimits,
        *,
        turn: TurnRequest,
        store: ExecutionStore,
        clock: Callable[[], float],
    ) -> None:
        self.limits = limits
        self._any = limits.any
        # plain counters, not a Usage per call: every model call of every turn adds
        self._input = self._output = self._cached = self._calls = 0
        self._turn = turn
        self._store = store
        self._clock = clock

    @property
    def used(self) -> Usage:
        """What the turn's model calls spent so far."""
        return Usage(self._input, self._output, self._cached, self._calls)

    def add(self, tokens: Mapping[str, int]) -> None:
        """Count one model call (made now, or replayed from an earlier attempt)."""
        self._calls += 1
        if tokens:
            self._input += tokens.get("input", 0)
            self._output += tokens.get("output", 0)
            self._cached += tokens.get("cached", 0)

    def check(self) -> Stop | None:
        """The first limit reached (``None``: the turn may call its model again)."""
        if not self._any:  # no limit at all: most turns
            return None
        limits = self.limits
        calls, tokens = limits.max_model_calls, limits.max_tokens_per_turn
        over_calls = calls is not None and self._calls >= calls
        if not over_calls and (tokens is None or self._input + self._output < tokens):
            return self._owner_day() or self._budget()
        used = self.used
        if over_calls:
            assert calls is not None
            return Stop(
                USAGE_LIMIT,
                f"model call limit reached: this turn made {used.model_calls} model "
                f"call{'s' if used.model_calls != 1 else ''} "
                f"(max_model_calls = {calls}); stopped before calling the model again",
                "max_model_calls",
                used.model_calls,
                calls,
            )
        if tokens is not None and used.total >= tokens:
            return Stop(
                USAGE_LIMIT,
                f"token limit reached: this turn used {used.total} tokens ({used.input} "
                f"input, {used.output} output) of max_tokens_per_turn = {tokens}",
                "max_tokens_per_turn",
                used.total,
                tokens,
            )
        return self._owner_day() or self._budget()

    def _others(self, where: UsageFilter) -> int:
        return self._store.usage(attrs.evolve(where, exclude_turn=self._turn.id)).total

    def _owner_day(self) -> Stop | None:
        daily, owner = self.limits.owner_daily_tokens, self._turn.owner
        if daily is None or owner is None:
            return None
        spent = self._others(UsageFilter(owner=owner, since=day_start(self._clock())))
        spent += self._input + self._output
        if spent < daily:
            return None
        return Stop(
            USAGE_LIMIT,
            f"daily token limit reached: owner {owner!r} used {spent} tokens today (UTC) "
            f"of owner_daily_tokens = {daily}",
            "owner_daily_tokens",
            spent,
            daily,
        )

    def _budget(self) -> Stop | None:
        budget = self.limits.budget
        if budget is None:
            return None
        spent = self._others(UsageFilter(budget=budget.scope)) + self._input + self._output
        if spent < budget.tokens:
            return None
        return Stop(
            BUDGET_EXCEEDED,
            f"budget exceeded: {budget.label or budget.scope} spent {spent} tokens of its "
            f"budget of {budget.tokens}",
            "budget",
            spent,
            budget.tokens,
        )
