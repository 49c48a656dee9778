"""Spend as a request and a store see it: the outcomes a spend limit ends a turn with,
a model's reported usage as a step stores it, and what a request may ask for — its own
limits (``meta["limits"]``) and the budget it draws on (``meta["budget"]``) — checked at
the door (the inbox) before anything is stored.

How a running turn is held to these is :mod:`toolang_core.turn.usage`; see
docs/spend-limits.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

import attrs

from toolang_core.store.usage import Usage

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


def token_count(value: object) -> int | None:
    """``value`` when it is a count (an integer >= 0, not a bool), else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _first(usage: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        found = token_count(usage.get(key))
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
        cached = token_count(details.get("cached_tokens"))
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
        if token_count(limit) is None or limit < 1:
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
    if token_count(tokens) is None:
        raise ValueError(f"budget.tokens: expected an integer >= 0, found {tokens!r}")
