"""Token usage as the execution store sums it: the values of :meth:`ExecutionStore.usage`.

Every completed model call step — a turn's ``model_call`` and a summarising
``compaction`` (:data:`USAGE_STEP_KINDS`) — whose model reported usage carries it normalised
under ``data["tokens"]`` (``input``, ``output``, ``cached``; see
:func:`toolang_core.spend.tokens_of`). A store sums those over the turns a
:class:`UsageFilter` selects; it never reads the provider's own keys.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

TOKEN_KINDS: Final = ("input", "output", "cached")
"""The keys of a model call step's ``data["tokens"]``."""
USAGE_STEP_KINDS: Final = ("model_call", "compaction")
"""The kinds of step that are model calls a store sums (a compaction's summarising call
is spent like any other)."""
USAGE_STEPS_SQL: Final = (
    "s.kind IN (" + ", ".join(f"'{kind}'" for kind in USAGE_STEP_KINDS) + ") "
    "AND s.status = 'completed'"
)
"""A usage sum's condition on its steps ``s``, for SQL backends."""


@attrs.frozen
class Usage:
    """Tokens and model calls. ``total`` (what limits count) is input plus output;
    ``cached`` is the part of the input the provider served from its cache (reported
    by some providers only; never counted twice)."""

    input: int = 0
    output: int = 0
    cached: int = 0
    model_calls: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cached + other.cached,
            self.model_calls + other.model_calls,
        )

    def to_json(self) -> dict[str, int]:
        """As the CLI's ``--json`` and the HTTP API show it."""
        return {
            "input_tokens": self.input,
            "output_tokens": self.output,
            "cached_tokens": self.cached,
            "total_tokens": self.total,
            "model_calls": self.model_calls,
        }

    @classmethod
    def of_row(cls, row: Any) -> Usage:
        """From a store's ``(model_calls, input, output, cached)`` row (sums may be NULL)."""
        calls, inputs, outputs, cached = row
        return cls(int(inputs or 0), int(outputs or 0), int(cached or 0), int(calls or 0))


@attrs.frozen
class UsageFilter:
    """Which model calls :meth:`ExecutionStore.usage` sums; every field set must match.

    ``turn_id``, ``thread_id`` (a task run: its turn id, or its thread ``task:<id>``),
    ``owner`` (the turn request's owner), ``budget`` (the scope of the spend budget its
    turn draws on, e.g. ``team:<id>``: ``meta["budget"]["scope"]``), ``since`` (steps
    finished at or after this time, seconds since the epoch). ``exclude_turn`` leaves
    one turn out (a running turn counts its own calls itself: some are not stored yet).
    """

    turn_id: str | None = None
    thread_id: str | None = None
    owner: str | None = None
    budget: str | None = None
    since: float | None = None
    exclude_turn: str | None = None
