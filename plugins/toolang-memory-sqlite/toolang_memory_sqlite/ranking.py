"""Recall ranking's input: FTS5's matches as :func:`toolang_core.memory.kit.blend`
ranks them.

FTS5's ``bm25()`` is negative, more negative is better: a candidate carries it as it is,
so the best full-text match of a recall has relevance 1 and the others fall between 0
and 1; the kit blends recency and uses in and applies the request's limits
(``within_limits``), the same for every memory plugin.
"""

from __future__ import annotations

Candidate = tuple[int, float, float, int, int, float | None]
"""One full-text match, before ranking: its entry's id, its bm25, the entry's
``updated_at``, its text's length, and its stored ``use_count`` and ``last_used_at`` —
the row as SQLite returns it (a recall reads up to ``candidates`` of them: no object is
made for each)."""
