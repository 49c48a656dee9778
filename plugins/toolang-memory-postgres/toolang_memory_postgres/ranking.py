"""Recall ranking: full-text relevance blended with recency, then the request's limits
(memory-sqlite's formula, kept here because plugins never import each other).

``score = (1 - w) * relevance + w * 0.5 ** (age_days / half_life_days)``

- ``relevance`` is the candidate's ``ts_rank_cd`` over the best candidate's (a
  candidate carries it negated, as memory-sqlite's carry FTS5's bm25), so the best match
  of the recall has relevance 1 and the others fall between 0 and 1;
- ``age_days`` is the time since the entry's last write;
- ``w`` is ``recency_weight``: 0 ranks by relevance alone, 1 by recency alone.

Scores fall between 0 and 1. Equal scores put the newer entry first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

import attrs

DAY: Final = 86_400.0
ELLIPSIS: Final = "…"
MIN_CLIP_CHARS: Final = 200
"""An entry longer than what is left of ``max_chars`` is cut to fit when at least this
much is left; with less left it is skipped (a smaller entry further down may fit)."""


Candidate = tuple[int, float, float, int]
"""One full-text match, before ranking: its entry's id, its rank negated (more
negative is better), the entry's ``updated_at`` and its text's length — the row as
the server returns it."""


@attrs.frozen
class Ranked:
    """A candidate with its blended score, and how much of its text to return."""

    candidate: Candidate
    score: float
    keep_chars: int
    """The candidate's length when whole; less when clipped to fit ``max_chars``."""

    @property
    def clipped(self) -> bool:
        return self.keep_chars < self.candidate[3]


def blend(
    candidates: Sequence[Candidate], *, now: float, weight: float, half_life_days: float
) -> list[tuple[float, Candidate]]:
    """Score ``candidates`` (formula in the module docstring), best first."""
    if not candidates:
        return []
    best = -min([c[1] for c in candidates])
    keep = 1.0 - weight
    keyed = []
    for c in candidates:
        id_, negated, updated_at, _ = c
        relevance = (-negated / best) if best > 0 else 1.0
        age = now - updated_at
        recency = 0.5 ** (((age if age > 0.0 else 0.0) / DAY) / half_life_days)
        score = keep * relevance + weight * recency
        keyed.append((-score, -updated_at, -id_, score, c))
    keyed.sort()  # best first; equal scores: the newer entry, then the higher id
    return [(k[3], k[4]) for k in keyed]


def within_limits(
    scored: Iterable[tuple[float, Candidate]], *, max_items: int, max_chars: int
) -> list[Ranked]:
    """Take entries best first until ``max_items`` or ``max_chars`` is reached.

    An entry that does not fit in what is left of ``max_chars`` is clipped to fit
    (its returned text ends with ``…``) when at least :data:`MIN_CLIP_CHARS` are left,
    and skipped otherwise.
    """
    taken: list[Ranked] = []
    left = max_chars
    for score, c in scored:
        if len(taken) >= max_items or left <= 0:
            break
        length = c[3]
        if length <= left:
            taken.append(Ranked(c, score, length))
            left -= length
        elif left >= MIN_CLIP_CHARS:
            taken.append(Ranked(c, score, left))
            left = 0
    return taken


def clip(text: str, keep_chars: int) -> str:
    """``text`` cut to ``keep_chars`` characters, the last one an ellipsis."""
    if len(text) <= keep_chars:
        return text
    return text[: keep_chars - len(ELLIPSIS)] + ELLIPSIS
