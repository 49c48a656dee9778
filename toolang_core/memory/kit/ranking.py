"""Recall ranking: full-text relevance blended with recency and uses, then the request's
limits.

``score = (1 - w) * relevance + w * 0.5 ** (age_days / half_life_days)``

- ``relevance`` is the candidate's rank over the best candidate's (a candidate carries
  its rank negated, more negative is better, as SQLite FTS5's ``bm25()`` gives it), so
  the best full-text match of the recall has relevance 1 and the others fall between 0
  and 1;
- ``age_days`` is the time since the entry's last write;
- ``w`` is ``recency_weight``: 0 ranks by relevance alone, 1 by recency alone.

Scores fall between 0 and 1. Equal scores put the newer entry first.

When some candidate was ever recalled, its uses are blended in the same pass
(``usages``, :func:`~toolang_core.memory.kit.usages`): ``score = (1 - use_weight) *
blended + use_weight * relevance * usage``, equal scores keeping the order of ``blended``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Generic, TypeVar

import attrs

DAY: Final = 86_400.0
ELLIPSIS: Final = "…"
MIN_CLIP_CHARS: Final = 200
"""An entry longer than what is left of ``max_chars`` is cut to fit when at least this
much is left; with less left it is skipped (a smaller entry further down may fit)."""

Candidate = tuple[int, float, float, int, *tuple[Any, ...]]
"""One full-text match, before ranking: its entry's id, its rank negated (more negative
is better), the entry's ``updated_at`` and its text's length, then whatever else the
plugin reads with it — the row as the database returns it (a recall reads up to
``candidates`` of them: no object is made for each)."""

C = TypeVar("C", bound=Candidate)


@attrs.frozen
class Ranked(Generic[C]):
    """A candidate with its blended score, and how much of its text to return."""

    candidate: C
    score: float
    keep_chars: int
    """The candidate's length when whole; less when clipped to fit ``max_chars``."""

    @property
    def clipped(self) -> bool:
        return self.keep_chars < self.candidate[3]


def blend(
    candidates: Sequence[C],
    *,
    now: float,
    weight: float,
    half_life_days: float,
    usages: Mapping[int, float] | None = None,
    use_weight: float = 0.0,
) -> list[tuple[float, C]]:
    """Score ``candidates`` (formula in the module docstring), best first.

    ``usages`` (entry id → usage, 0 when left out; ``None`` when no candidate was ever
    recalled) blends uses in with ``use_weight``, in the same pass and the same sort as
    recency: equal final scores keep the order of the blended ones."""
    if not candidates:
        return []
    best = -min([c[1] for c in candidates])
    keep = 1.0 - weight
    keep_used = 1.0 - use_weight
    by_use = usages is not None and use_weight > 0.0
    used: Mapping[int, float] = usages if usages is not None else {}
    keyed = []
    for c in candidates:
        id_, negated, updated_at = c[0], c[1], c[2]
        relevance = (-negated / best) if best > 0 else 1.0
        age = now - updated_at
        recency = 0.5 ** (((age if age > 0.0 else 0.0) / DAY) / half_life_days)
        score = keep * relevance + weight * recency
        final = score
        if by_use:
            final = keep_used * score + use_weight * relevance * used.get(id_, 0.0)
        # best first; equal scores: the better blended one, the newer entry, the higher id
        keyed.append((-final, -score, -updated_at, -id_, final, c))
    keyed.sort()
    return [(k[4], k[5]) for k in keyed]


def within_limits(
    scored: Iterable[tuple[float, C]], *, max_items: int, max_chars: int
) -> list[Ranked[C]]:
    """Take entries best first until ``max_items`` or ``max_chars`` is reached.

    An entry that does not fit in what is left of ``max_chars`` is clipped to fit
    (its returned text ends with ``…``) when at least :data:`MIN_CLIP_CHARS` are left,
    and skipped otherwise.
    """
    taken: list[Ranked[C]] = []
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
