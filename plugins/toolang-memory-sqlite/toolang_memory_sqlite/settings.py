"""``[plugins.memory-sqlite]``: where entries live, how recall ranks, what is refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Literal

import attrs

NAME: Final = "memory-sqlite"
"""The entry-point name: the settings section and the migration set."""

PROVIDER: Final = "sqlite"
"""The memory plugin's name: ``[memory] plugin = "sqlite"``."""


def at_least(minimum: float) -> Callable[[Any, attrs.Attribute[Any], float], None]:
    """An attrs validator whose message names the key, e.g. ``candidates: expected …``."""

    def check(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
        if not value >= minimum:  # also refuses NaN
            raise ValueError(f"{attribute.name}: expected a number >= {minimum:g}, found {value}")

    return check


def _fraction(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{attribute.name}: expected a number from 0 to 1, found {value}")


def _at_most_half(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    # More than half would let uses outrank a clearly better match.
    if not 0.0 <= value <= 0.5:
        raise ValueError(f"{attribute.name}: expected a number from 0 to 0.5, found {value}")


def _path_only_for_own(instance: MemorySQLiteSettings, _: Any, value: Path | None) -> None:
    if value is not None and instance.database == "store":
        raise ValueError(
            'path: set only with database = "own" (with database = "store" the entries '
            "live in the execution store's file, [store] path)"
        )


@attrs.frozen
class MemorySQLiteSettings:
    """``[plugins.memory-sqlite]``.

    ``database``: ``"own"`` keeps entries in their own file, ``path`` (default
    ``<home>/plugins/memory-sqlite.db``); ``"store"`` keeps them in the SQLite execution
    store's file (one file to back up; needs ``[store] backend = "sqlite"``).

    Recall ranks the ``candidates`` best full-text matches (bm25) and blends in recency:
    ``score = (1 - recency_weight) * relevance + recency_weight * 0.5 ** (age_days /
    recency_half_life_days)``, where ``relevance`` is the match's bm25 divided by the
    best candidate's (so the best match has 1) and ``age_days`` counts from the entry's
    last write. ``recency_weight = 0`` ranks by relevance alone.
    """

    database: Literal["own", "store"] = "own"
    path: Path | None = attrs.field(default=None, validator=_path_only_for_own)
    recency_weight: float = attrs.field(default=0.2, validator=_fraction)
    recency_half_life_days: float = attrs.field(default=30.0, validator=at_least(0.001))
    candidates: int = attrs.field(default=50, validator=at_least(1))
    """How many best full-text matches are re-scored with recency before the limits apply."""
    ranked_matches: int = attrs.field(default=1000, validator=at_least(10))
    """The bound on one recall's work: at most this many full-text matches are scored.
    The query's rarest words are kept while their matches fit; when even the rarest
    word matches more, the newest matches are ranked by how many query words they hold."""
    max_query_terms: int = attrs.field(default=16, validator=at_least(1))
    """Distinct words of a query searched for (the first ones, stopwords dropped)."""
    max_entry_chars: int = attrs.field(default=1_000_000, validator=at_least(1))
    """A longer entry is refused, with its whole batch."""
    prune_batch: int = attrs.field(default=100, validator=at_least(1))
    """Expired entries deleted by each write (``health`` and ``prune()`` delete them all)."""
    use_weight: float = attrs.field(default=0.05, validator=_at_most_half)
    """How much an entry's uses count in recall (0 to 0.5): ``score = (1 - use_weight) *
    blended + use_weight * relevance * usage`` (see :mod:`.uses`); 0 ignores uses."""
    use_threshold: int = attrs.field(default=3, validator=at_least(1))
    """Uses from which an entry counts as used often (fewer add nothing to ranking)."""
    use_saturation: int = attrs.field(default=16, validator=at_least(1))
    """Uses at which ``usage`` reaches its most (it grows with the log of the count)."""
    pending_uses: int = attrs.field(default=256, validator=at_least(1))
    """The write-behind bound: recalled entries whose use is counted in memory until the
    next write commits it; at this many a recall commits them itself."""
    max_entries: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(at_least(1))
    )
    """Entries kept per agent and owner (``None``: no limit). A write past it deletes the
    least used first: never-recalled before recalled, then the longest unused."""
    busy_timeout_seconds: float = attrs.field(default=10.0, validator=at_least(0))
    """How long a write waits for another process's write (e.g. the store's) to finish."""
