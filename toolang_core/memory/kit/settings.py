"""The settings a memory plugin shares with the built-in ones: how recall ranks, how
much one recall may do, what a write refuses, how uses count (a plugin's settings class
subclasses :class:`RankingSettings` and adds its own), and validators whose messages
name the key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs


def at_least(minimum: float) -> Callable[[Any, attrs.Attribute[Any], float], None]:
    """An attrs validator whose message names the key, e.g. ``candidates: expected …``."""

    def check(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
        if not value >= minimum:  # also refuses NaN
            raise ValueError(f"{attribute.name}: expected a number >= {minimum:g}, found {value}")

    return check


def fraction(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    """An attrs validator: a number from 0 to 1 (the message names the key)."""
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{attribute.name}: expected a number from 0 to 1, found {value}")


def _at_most_half(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    # More than half would let uses outrank a clearly better match.
    if not 0.0 <= value <= 0.5:
        raise ValueError(f"{attribute.name}: expected a number from 0 to 0.5, found {value}")


@attrs.frozen
class RankingSettings:
    """What every built-in memory plugin's settings section holds (its own class adds
    its database's keys).

    Recall ranks the ``candidates`` best full-text matches and blends in recency:
    ``score = (1 - recency_weight) * relevance + recency_weight * 0.5 ** (age_days /
    recency_half_life_days)``, where ``relevance`` is the match's rank over the best
    candidate's (so the best match has 1) and ``age_days`` counts from the entry's last
    write (:func:`~toolang_core.memory.kit.blend`). ``recency_weight = 0`` ranks by
    relevance alone.
    """

    recency_weight: float = attrs.field(default=0.2, validator=fraction)
    recency_half_life_days: float = attrs.field(default=30.0, validator=at_least(0.001))
    candidates: int = attrs.field(default=50, validator=at_least(1))
    """How many best full-text matches are re-scored with recency before the limits apply."""
    ranked_matches: int = attrs.field(default=1000, validator=at_least(10))
    """The bound on one recall's work: at most this many full-text matches are ranked
    (which ones, the plugin's documentation says)."""
    max_query_terms: int = attrs.field(default=16, validator=at_least(1))
    """Distinct words of a query searched for (the first ones, stopwords dropped)."""
    max_entry_chars: int = attrs.field(default=1_000_000, validator=at_least(1))
    """A longer entry is refused, with its whole batch."""
    prune_batch: int = attrs.field(default=100, validator=at_least(1))
    """Expired entries deleted by each write (``health`` and ``prune()`` delete them all)."""
    use_weight: float = attrs.field(default=0.05, validator=_at_most_half)
    """How much an entry's uses count in recall (0 to 0.5): ``score = (1 - use_weight) *
    blended + use_weight * relevance * usage`` (:func:`~toolang_core.memory.kit.usages`);
    0 ignores uses."""
    use_threshold: int = attrs.field(default=3, validator=at_least(1))
    """Uses from which an entry counts as used often (fewer add nothing to ranking)."""
    use_saturation: int = attrs.field(default=16, validator=at_least(1))
    """Uses at which ``usage`` reaches its most (it grows with the log of the count)."""
    pending_uses: int = attrs.field(default=256, validator=at_least(1))
    """The write-behind bound: recalled entries whose use is counted in memory until the
    next write commits it; at this many the recall that reaches the bound has them
    committed in a transaction of their own (memory-postgres commits them itself;
    memory-sqlite hands the commit to its database thread)."""
    max_entries: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(at_least(1))
    )
    """Entries kept per agent and owner (``None``: no limit). A write past it deletes the
    longest unused first: by an entry's last use, or its write when never recalled."""
