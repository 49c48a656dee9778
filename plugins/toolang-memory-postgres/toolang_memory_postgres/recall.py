"""Recall: the agent's entries that best match a query, by full text (``ts_rank_cd``
over the newest matches, :func:`.statements.candidates`) and, with semantic recall on,
by meaning (:mod:`.semantic`), ranked with recency and uses
(:func:`toolang_core.memory.kit.rank`). A query that cannot be embedded falls back to
full-text recall (its diagnostics and ``health`` say why).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from toolang_core import PluginDatabase
from toolang_core.memory import MemoryItem, MemoryRecallRequest, MemoryRecallResult, kit
from toolang_memory_postgres import semantic, statements, uses
from toolang_memory_postgres.connection import Connection
from toolang_memory_postgres.ranking import Candidate
from toolang_memory_postgres.schema import ITEMS
from toolang_memory_postgres.settings import PROVIDER, MemoryPostgresSettings


def recall_now(
    connection: Connection, pending: kit.PendingUses, request: MemoryRecallRequest
) -> MemoryRecallResult:
    """The agent's entries that best match ``request.query_text``: the newest
    ``ranked_matches`` matches ranked (``relevance``), the best ``candidates``
    blended with recency and uses and cut to the request's limits
    (:func:`toolang_core.memory.kit.rank`); each returned entry counts one use in
    ``pending`` (committed later, :mod:`.uses`)."""
    settings = connection.settings
    recalling = kit.Recalling.of(request, settings.max_query_terms)
    chosen, diagnostics = recalling.terms, recalling.diagnostics
    ranked: list[kit.Ranked[Candidate]] = []
    items: tuple[MemoryItem, ...] = ()
    now = connection.clock()
    by_meaning = connection.embedder is not None and bool(request.query_text.strip())
    if chosen or by_meaning:
        with connection.guard("recall"):
            db = connection.database()
            scope = (request.agent_id, request.owner, request.thread_id)
            found: list[Candidate] = []
            if chosen:
                found = statements.candidates(
                    db,
                    scope,
                    chosen,
                    language=settings.language,
                    relevance=settings.relevance,
                    now=now,
                    budget=settings.ranked_matches,
                    limit=settings.candidates,
                    entries=functools.partial(connection.counts.get, db, scope),
                    table=functools.partial(connection.counts.table, db),
                    over=functools.partial(connection.counts.over, scope),
                    counted_over=functools.partial(connection.counts.counted_over, scope),
                    diagnostics=diagnostics,
                )
            if by_meaning:
                found = _by_meaning(
                    connection,
                    db,
                    scope,
                    request.query_text,
                    found=found,
                    now=now,
                    diagnostics=diagnostics,
                )
            usages = _usages(db, settings, pending, found, now)
            ranked = kit.rank(found, request.limits, settings, now=now, usages=usages)
            # one use of each item counted (pending), carried by the items
            counted = pending.add([r.candidate[0] for r in ranked], now)
            items = _ranked_items(db, ranked, counted)
            diagnostics["candidates"] = len(found)
        connection.flush_if_full(pending)
    return recalling.result(PROVIDER, items, ranked)


def _by_meaning(
    connection: Connection,
    db: PluginDatabase,
    scope: tuple[str, str | None, str | None],
    query_text: str,
    *,
    found: list[Candidate],
    now: float,
    diagnostics: dict[str, Any],
) -> list[Candidate]:
    """``found`` (full-text candidates) merged with the entries nearest the query in
    meaning (:func:`.semantic.hybrid`); ``found`` alone when the query cannot be
    embedded (diagnostics ``semantic_error``, kept for ``health``)."""
    assert connection.embedder is not None
    assert connection.vectors is not None
    settings = connection.settings
    name = str(settings.embedding_model)
    dimensions = connection.vectors.dimensions
    try:
        (query,) = semantic.embed(connection.embedder, name, [query_text], dimensions)
    except semantic.SemanticError as exc:
        connection.failures.record(str(exc))
        diagnostics["semantic_error"] = str(exc)
        return found
    near = semantic.nearest(
        db,
        connection.vectors,
        scope,
        query,
        also=[c[0] for c in found],
        now=now,
        settings=settings,
    )
    diagnostics["similar"] = len(near)
    merged = semantic.hybrid(found, near, settings.semantic_weight)
    merged.sort(key=lambda c: (c[1], -c[2]))
    return merged[: settings.candidates + settings.semantic_candidates]


def _usages(
    db: PluginDatabase,
    settings: MemoryPostgresSettings,
    pending: kit.PendingUses,
    candidates: Sequence[Candidate],
    now: float,
) -> dict[int, float] | None:
    """What the candidates' uses, stored (one read) and pending, add to their ranking
    (:func:`toolang_core.memory.kit.usages`); ``None`` when uses do not count."""
    if settings.use_weight <= 0.0 or not candidates:
        return None
    ids = [c[0] for c in candidates]
    stored = uses.stored(db, ids)
    return kit.usages(
        ((i, *stored.get(i, (0, None))) for i in ids),
        pending.get(ids),
        now=now,
        threshold=settings.use_threshold,
        saturation=settings.use_saturation,
        half_life_days=settings.recency_half_life_days,
    )


def _ranked_items(
    db: PluginDatabase,
    ranked: Sequence[kit.Ranked[Candidate]],
    counted: Mapping[int, tuple[int, float]],
) -> tuple[MemoryItem, ...]:
    """The ranked entries as items (:func:`toolang_core.memory.kit.ranked_items`), in
    one read; each carries its uses, the ``counted`` ones (pending) added."""
    if not ranked:
        return ()
    ids = [r.candidate[0] for r in ranked]
    rows = db.execute(
        f"SELECT {kit.ITEM_COLUMNS}, substr(text, 1, ?) FROM {ITEMS} WHERE id = ANY(?)",
        [kit.read_chars(ranked), ids],
    )
    return kit.ranked_items(ranked, rows, counted)
