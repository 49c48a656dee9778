"""``[limits]``: what one turn, and one owner in one day, may spend on model calls.

Beside ``[agents] max_steps`` (a bound on the loop's length) these bound the loop's
cost. Every key is optional; with none set nothing is counted against anything and a
turn runs exactly as before. See docs/spend-limits.md.
"""

from __future__ import annotations

import attrs

from toolang_core.config.validators import PositiveInt


@attrs.frozen
class LimitsConfig:
    """``[limits]``: ``max_tokens_per_turn`` (input plus output tokens of every model
    call of one turn), ``max_model_calls`` (model calls of one turn) and
    ``owner_daily_tokens`` (input plus output tokens of every turn one owner's work made
    since 00:00 UTC). A request may ask for lower per-turn limits, never higher ones.
    A limit reached ends the turn ``failed`` with outcome ``usage_limit``."""

    max_tokens_per_turn: PositiveInt | None = None
    max_model_calls: PositiveInt | None = None
    owner_daily_tokens: PositiveInt | None = None
