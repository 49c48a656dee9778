"""``[plugins.memory-postgres]``: how recall ranks, what is refused, how long a write waits."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, Literal

import attrs

NAME: Final = "memory-postgres"
"""The entry-point name: the settings section and the plugin database (its schema)."""

PROVIDER: Final = "postgres"
"""The memory plugin's name: ``[memory] plugin = "postgres"``."""

_CONFIG_NAME: Final = re.compile(r"[a-z_][a-z0-9_]{0,62}")


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


def _config_name(_: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not _CONFIG_NAME.fullmatch(value):
        raise ValueError(
            f"{attribute.name}: expected the name of a PostgreSQL text search configuration "
            f"(e.g. 'english', 'simple'), found {value!r}"
        )


@attrs.frozen
class MemoryPostgresSettings:
    """``[plugins.memory-postgres]``.

    ``language`` is the text search configuration entries are indexed and queries
    parsed with (``english``: stemming and English stopwords, like memory-sqlite's
    porter tokenizer; ``simple``: words as written). Each entry keeps the configuration
    it was indexed with (its ``language`` column) and queries are parsed with the one
    configured now: after a change, older entries match again once rewritten.

    Recall ranks the ``candidates`` best full-text matches (``relevance``) and blends
    in recency exactly as memory-sqlite does: ``score = (1 - recency_weight) *
    relevance + recency_weight * 0.5 ** (age_days / recency_half_life_days)``, where
    ``relevance`` is the match's rank over the best candidate's.
    """

    language: str = attrs.field(default="english", validator=_config_name)
    relevance: Literal["bm25", "ts_rank_cd"] = "bm25"
    """How a match's relevance is measured (:func:`.statements.candidates`)."""
    recency_weight: float = attrs.field(default=0.2, validator=_fraction)
    recency_half_life_days: float = attrs.field(default=30.0, validator=at_least(0.001))
    candidates: int = attrs.field(default=50, validator=at_least(1))
    """How many best full-text matches are re-scored with recency before the limits apply."""
    ranked_matches: int = attrs.field(default=1000, validator=at_least(10))
    """The bound on one recall's work: at most this many matches (the newest) are ranked."""
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
    lock_timeout_seconds: float = attrs.field(default=10.0, validator=at_least(0.001))
    """How long a write waits for a lock another session holds on the plugin's tables."""
    semantic: bool = False
    """Semantic recall (pgvector): entries are also found by meaning, through the
    embeddings of ``embedding_model`` (docs: "Semantic recall"). Off by default."""
    embedding_model: str | None = None
    """The embedding model, ``"<provider>"`` or ``"<provider>/<model id>"`` (e.g.
    ``"llm/3-small"`` with toolang-model-llm); required by ``semantic = true``."""
    semantic_weight: float = attrs.field(default=0.5, validator=_fraction)
    """The share of cosine similarity in an entry's relevance (the rest: its full-text
    rank): 0 ranks by words alone (similar entries are still found), 1 by meaning alone."""
    min_similarity: float = attrs.field(default=0.4, validator=_fraction)
    """The cosine similarity an entry found by meaning alone must reach (what counts as
    related depends on the model: 0.3 to 0.5 suits most)."""
    semantic_candidates: int = attrs.field(default=50, validator=at_least(1))
    """How many nearest entries join the full-text candidates."""
    semantic_scan: int = attrs.field(default=10_000, validator=at_least(10))
    """The bound on one semantic search's work: the scope's newest entries compared."""
    backfill_batch: int = attrs.field(default=20, validator=at_least(0))
    """Entries without an embedding (written while semantic recall was off) each write
    embeds from its own scope, newest first; 0: none (they are found by their words)."""

    def __attrs_post_init__(self) -> None:
        if self.semantic and not self.embedding_model:
            raise ValueError(
                "embedding_model: semantic = true needs the embedding model to embed entries "
                'with, e.g. embedding_model = "llm/3-small" (toolang-model-llm); found none'
            )
