"""Recall ranking's input: the server's matches as :func:`toolang_core.memory.kit.blend`
ranks them (memory-sqlite's formula: the kit blends recency and uses in and applies the
request's limits).

A candidate carries its relevance — bm25 or ``ts_rank_cd``
(:func:`.statements.candidates`), or that blended with cosine similarity
(:func:`.semantic.hybrid`) — negated, as memory-sqlite's carry FTS5's bm25, so the best
match of the recall has relevance 1 and the others fall between 0 and 1.
"""

from __future__ import annotations

Candidate = tuple[int, float, float, int]
"""One full-text match, before ranking: its entry's id, its rank negated (more
negative is better), the entry's ``updated_at`` and its text's length — the row as
the server returns it."""
