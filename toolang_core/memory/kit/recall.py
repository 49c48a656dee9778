"""One recall from query to result: its terms and diagnostics, the candidates ranked
within the request's limits, the result with what it returned and how long it took."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from toolang_core.memory.kit.ranking import C, Ranked, blend, within_limits
from toolang_core.memory.kit.settings import RankingSettings
from toolang_core.memory.kit.text import Term, query_terms
from toolang_core.memory.types import (
    MemoryItem,
    MemoryLimits,
    MemoryRecallRequest,
    MemoryRecallResult,
)


@attrs.define
class Recalling:
    """A recall under way (:meth:`of` a request): the query's :attr:`terms`, the
    :attr:`diagnostics` the plugin adds to, and when it started; :meth:`result` ends it."""

    terms: list[Term]
    diagnostics: dict[str, Any]
    started: float

    @classmethod
    def of(cls, request: MemoryRecallRequest, max_terms: int) -> Recalling:
        """Start recalling for ``request``: up to ``max_terms`` distinct terms of its query
        (:func:`~toolang_core.memory.kit.query_terms`), counted in the diagnostics."""
        chosen = query_terms(request.query_text, max_terms)
        return cls(terms=chosen, diagnostics={"terms": len(chosen)}, started=time.perf_counter())

    def result(
        self, provider: str, items: tuple[MemoryItem, ...], ranked: Sequence[Ranked[Any]]
    ) -> MemoryRecallResult:
        """The recall's result: ``items``, with diagnostics saying how many were
        returned, how many of them ``ranked`` clipped and the milliseconds it took."""
        self.diagnostics.update(
            returned=len(items),
            clipped=sum(r.clipped for r in ranked),
            ms=round((time.perf_counter() - self.started) * 1000, 3),
        )
        return MemoryRecallResult(items=items, provider=provider, diagnostics=self.diagnostics)


def rank(
    found: Sequence[C],
    limits: MemoryLimits,
    settings: RankingSettings,
    *,
    now: float,
    usages: Mapping[int, float] | None,
) -> list[Ranked[C]]:
    """``found`` blended with recency and ``usages`` as ``settings`` say
    (:func:`~toolang_core.memory.kit.blend`), best first, within ``limits``
    (:func:`~toolang_core.memory.kit.within_limits`)."""
    scored = blend(
        found,
        now=now,
        weight=settings.recency_weight,
        half_life_days=settings.recency_half_life_days,
        usages=usages,
        use_weight=settings.use_weight,
    )
    return within_limits(scored, max_items=limits.max_items, max_chars=limits.max_chars)
