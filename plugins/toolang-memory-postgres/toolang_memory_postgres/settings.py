"""``[plugins.memory-postgres]``: how recall ranks, what is refused, how long a write waits."""

from __future__ import annotations

import re
from typing import Any, Final, Literal

import attrs

from toolang_core.memory.kit import RankingSettings, at_least, fraction

NAME: Final = "memory-postgres"
"""The entry-point name: the settings section and the plugin database (its schema)."""

PROVIDER: Final = "postgres"
"""The memory plugin's name: ``[memory] plugin = "postgres"``."""

_CONFIG_NAME: Final = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def _config_name(_: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not _CONFIG_NAME.fullmatch(value):
        raise ValueError(
            f"{attribute.name}: expected the name of a PostgreSQL text search configuration "
            f"(e.g. 'english', 'simple'), found {value!r}"
        )


@attrs.frozen
class MemoryPostgresSettings(RankingSettings):
    """``[plugins.memory-postgres]``.

    ``language`` is the text search configuration entries are indexed and queries
    parsed with (``english``: stemming and English stopwords, like memory-sqlite's
    porter tokenizer; ``simple``: words as written). Each entry keeps the configuration
    it was indexed with (its ``language`` column) and queries are parsed with the one
    configured now: after a change, older entries match again once rewritten.

    Recall ranks the ``candidates`` best full-text matches (``relevance``) and blends
    in recency and uses exactly as memory-sqlite does; those keys and the other shared
    ones are :class:`toolang_core.memory.kit.RankingSettings`'s. ``ranked_matches``
    bounds one recall's work: at most this many matches are ranked (which ones:
    :func:`toolang_memory_postgres.statements.candidates`).
    """

    language: str = attrs.field(default="english", validator=_config_name)
    relevance: Literal["bm25", "ts_rank_cd"] = "bm25"
    """How a match's relevance is measured (:func:`.statements.candidates`)."""
    lock_timeout_seconds: float = attrs.field(default=10.0, validator=at_least(0.001))
    """How long a write waits for a lock another session holds on the plugin's tables."""
    semantic: bool = False
    """Semantic recall (pgvector): entries are also found by meaning, through the
    embeddings of ``embedding_model`` (docs: "Semantic recall"). Off by default."""
    embedding_model: str | None = None
    """The embedding model, ``"<provider>"`` or ``"<provider>/<model id>"`` (e.g.
    ``"llm/3-small"`` with toolang-model-llm); required by ``semantic = true``."""
    semantic_weight: float = attrs.field(default=0.5, validator=fraction)
    """The share of cosine similarity in an entry's relevance (the rest: its full-text
    rank): 0 ranks by words alone (similar entries are still found), 1 by meaning alone."""
    min_similarity: float = attrs.field(default=0.4, validator=fraction)
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
