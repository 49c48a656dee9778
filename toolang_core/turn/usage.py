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

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core.store.usage import Usage, UsageFilter

if TYPE_CHECKING:
    from toolang_core.config.spend import LimitsConfig
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.store.types import TurnRequest

USAGE_LIMIT: Final = "usage_limit"
"""The outcome of a turn stopped by a token or model-call limit (status ``failed``)."""
BUDGET_EXCEEDED: Final = "budget_exceeded"
"""The outcome of a turn stopped because its spend budget is used up (status ``failed``)."""

REQUEST_LIMITS: Final = ("max_tokens_per_turn", "max_model_calls")
"""The limits a request may ask for in ``meta["limits"]`` (lower than ``[limits]`` only)."""
DAY: Final = 86_400.0

# What providers call their counts (OpenAI chat, OpenAI responses / llm, Anthropic).
_INPUT: Final = ("input_tokens", "prompt_tokens", "input")
_OUTPUT: Final = ("output_tokens", "completion_tokens", "output")
_CACHED: Final = ("cached_tokens", "cache_read_input_tokens")


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _first(usage: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        found = _count(usage.get(key))
        if found is not None:
            return found
    return None


def tokens_of(usage: Mapping[str, Any]) -> dict[str, int]:
    """A model's reported ``usage`` as a step stores it: ``input``, ``output`` and
    ``cached`` where the provider said (OpenAI's ``prompt_tokens`` /
    ``completion_tokens``, ``input_tokens`` / ``output_tokens``, a cached count at the
    top level or in ``prompt_tokens_details``). Empty when it reported nothing."""
    found = {"input": _first(usage, _INPUT), "output": _first(usage, _OUTPUT)}
    cached = _first(usage, _CACHED)
    details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details")
    if cached is None and isinstance(details, Mapping):
        cached = _count(details.get("cached_tokens"))
    found["cached"] = cached
    return {key: value for key, value in found.items() if value is not None}


def usage_of(tokens: Mapping[str, int]) -> Usage:
    """One model call's :class:`Usage` from its step's ``tokens``."""
    return Usage(
        tokens.get("input", 0), tokens.get("output", 0), tokens.get("cached", 0), model_calls=1
    )


def day_start(now: float) -> float:
    """00:00 UTC of the day ``now`` is in: where an owner's daily tokens start again."""
    return math.floor(now / DAY) * DAY


# -- what a request may ask for (checked at the door) -----------------------------------


def check_request_limits(value: object) -> None:
    """Refuse a request's ``meta["limits"]`` that is not a table of positive integers
    under :data:`REQUEST_LIMITS`.

    :raises ValueError: naming the key and what was expected.
    """
    if not isinstance(value, Mapping):
        raise ValueError(f"limits: expected a table of {', '.join(REQUEST_LIMITS)}")
    for key, limit in value.items():
        if key not in REQUEST_LIMITS:
            raise ValueError(
                f"limits.{key}: unknown limit; a request may set {', '.join(REQUEST_LIMITS)}"
            )
        if _count(limit) is None or limit < 1:
            raise ValueError(f"limits.{key}: expected an integer >= 1, found {limit!r}")


def request_limits(max_tokens: int | None, max_model_calls: int | None) -> dict[str, Any]:
    """The ``meta`` of a request that asks for these limits (empty: none asked)."""
    asked = {"max_tokens_per_turn": max_tokens, "max_model_calls": max_model_calls}
    limits = {key: value for key, value in asked.items() if value is not None}
    return {"limits": limits} if limits else {}


@attrs.frozen
class SpendBudget:
    """A spend budget turns draw on together: ``scope`` names it in the store (every
    turn whose ``meta["budget"]["scope"]`` is the same counts), ``tokens`` is the
    total they may spend, ``label`` how messages name it (``team 0af3…``)."""

    scope: str
    tokens: int
    label: str = ""

    def to_meta(self) -> dict[str, Any]:
        """What a turn request drawing on this budget carries as ``meta["budget"]``."""
        return {"scope": self.scope, "tokens": self.tokens, "label": self.label or self.scope}

    @classmethod
    def from_meta(cls, value: object) -> SpendBudget | None:
        """The budget a request's ``meta["budget"]`` names (``None``: none)."""
        if value is None:
            return None
        check_budget(value)
        assert isinstance(value, Mapping)
        return cls(str(value["scope"]), int(value["tokens"]), str(value.get("label") or ""))


def check_budget(value: object) -> None:
    """Refuse a ``meta["budget"]`` that is not ``{scope, tokens[, label]}``.

    :raises ValueError: naming the key and what was expected.
    """
    if not isinstance(value, Mapping):
        raise ValueError("budget: expected a table with scope and tokens")
    scope, tokens = value.get("scope"), value.get("tokens")
    if not isinstance(scope, str) or not scope:
        raise ValueError(f"budget.scope: expected a non-empty string, found {scope!r}")
    if _count(tokens) is None:
        raise ValueError(f"budget.tokens: expected an integer >= 0, found {tokens!r}")


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
        asked = turn.meta.get("limits")
        asked = asked if isinstance(asked, Mapping) else {}
        return cls(
            _lower(config.max_tokens_per_turn, asked.get("max_tokens_per_turn")),
            _lower(config.max_model_calls, asked.get("max_model_calls")),
            config.owner_daily_tokens,
            SpendBudget.from_meta(turn.meta.get("budget")),
        )


def _lower(configured: int | None, asked: object) -> int | None:
    wanted = _count(asked)
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
                f"model call limit reached: this turn made {used.model_calls} model calls "
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
