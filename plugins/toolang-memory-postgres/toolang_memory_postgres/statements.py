"""The plugin's SQL: writes (upserted by key), recall candidates, forgetting filters and
pruning. Each function runs in the caller's transaction, if any.

Owners are compared as the unique key index spells them (``coalesce(owner, '')``),
and again exactly (``IS NOT DISTINCT FROM``), so one owner's rows never reach another.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, Literal

from toolang_core import PluginDatabase, redact_text
from toolang_core.memory import MemoryEntry, MemoryForget, MemoryWriteBatch
from toolang_core.memory.kit import Row, filter_clauses, key_chunks
from toolang_memory_postgres import text
from toolang_memory_postgres.ranking import Candidate
from toolang_memory_postgres.schema import ENTRIES

SCOPE: Final = (
    "agent_id = ? AND coalesce(owner, '') = coalesce(?::text, '') "
    "AND (owner IS NULL) = (?::text IS NULL)"
)
"""One agent's and owner's entries (parameters: agent, owner, owner)."""
LIVE: Final = "(expires_at IS NULL OR expires_at > ?)"
UPSERT: Final = (
    f"INSERT INTO {ENTRIES} (agent_id, owner, thread_id, turn_id, origin, key, kind, text, "
    "indexed, language, meta, created_at, updated_at, expires_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?::regconfig, ?, ?, ?, ?) "
    "ON CONFLICT (agent_id, coalesce(owner, ''), key) WHERE key IS NOT NULL DO UPDATE SET "
    "thread_id = excluded.thread_id, turn_id = excluded.turn_id, origin = excluded.origin, "
    "kind = excluded.kind, text = excluded.text, indexed = excluded.indexed, "
    "language = excluded.language, meta = excluded.meta, updated_at = excluded.updated_at, "
    "expires_at = excluded.expires_at"
)
"""One entry inserted, or the agent's and owner's entry with its key replaced (its
``created_at`` kept)."""


def upsert(vector_type: str | None) -> str:
    """:data:`UPSERT`, with the entry's embedding too when ``vector_type`` names the
    ``embedding`` column's type (semantic recall)."""
    if vector_type is None:
        return UPSERT
    return (
        UPSERT.replace("expires_at) VALUES", "expires_at, embedding) VALUES")
        .replace("?, ?, ?) ON CONFLICT", f"?, ?, ?, ?::{vector_type}) ON CONFLICT")
        .replace(
            "expires_at = excluded.expires_at",
            "expires_at = excluded.expires_at, embedding = excluded.embedding",
        )
    )


def write_rows(
    db: PluginDatabase,
    batch: MemoryWriteBatch,
    rows: Sequence[Row],
    *,
    now: float,
    language: str,
    embedded: tuple[str, Sequence[str]] | None = None,
) -> None:
    """Insert (or upsert by key) the rows of ``batch``, secrets masked (:func:`body`);
    with ``embedded`` — the vector type and one embedding per row, of its body — the
    entries' embeddings too."""
    values = []
    for n, (entry, meta) in enumerate(rows):
        masked = body(entry)
        expires = None if entry.ttl_seconds is None else now + entry.ttl_seconds
        row: tuple[Any, ...] = (
            *(batch.agent_id, batch.owner, batch.thread_id, batch.turn_id, batch.origin),
            *(entry.key, entry.kind, masked, text.index_text(masked), language, meta),
            *(now, now, expires),
        )
        values.append(row if embedded is None else (*row, embedded[1][n]))
    db.executemany(upsert(None if embedded is None else embedded[0]), values)


def body(entry: MemoryEntry) -> str:
    """The text stored for ``entry`` (and embedded): secrets masked."""
    return redact_text(entry.text)


def prune(db: PluginDatabase, now: float, limit: int) -> int:
    """Delete up to ``limit`` entries expired at ``now``; return how many."""
    return db.execute(
        f"DELETE FROM {ENTRIES} WHERE id IN (SELECT id FROM {ENTRIES} WHERE expires_at "
        "IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED)",
        [now, limit],
    ).rowcount


def forget_filters(request: MemoryForget) -> Iterator[tuple[str, list[Any]]]:
    """WHERE clauses (with parameters) selecting what ``request`` forgets: the agent's
    entries with the named keys, else those matching its thread, kind and age."""
    scope: list[Any] = [request.agent_id, request.owner, request.owner]
    if request.keys:
        for chunk in key_chunks(request):
            yield f"{SCOPE} AND key = ANY(?)", [*scope, chunk]
        return
    where, params = filter_clauses(request)
    yield " AND ".join([SCOPE, *where]), [*scope, *params]


RANK_NORMALIZATION: Final = 1
"""``ts_rank_cd``'s normalization: divided by 1 + the log of the entry's length."""
K1: Final = 1.2
B: Final = 0.75
"""bm25's parameters, FTS5's defaults (memory-sqlite ranks with them)."""


def live_in(request_scope: tuple[str, str | None, str | None], now: float) -> tuple[str, list[Any]]:
    """The WHERE clause and parameters of the live entries of the scope ``(agent,
    owner, thread)`` (``thread`` ``None``: every thread)."""
    agent_id, owner, thread_id = request_scope
    where = f"{SCOPE} AND {LIVE}"
    scope: list[Any] = [agent_id, owner, owner, now]
    if thread_id is not None:
        where += " AND thread_id = ?"
        scope.append(thread_id)
    return where, scope


Mode = Literal["all-words", "rare-words", "common-words"]
"""How a recall chose the words it ranks by (:func:`candidates`)."""


def candidates(
    db: PluginDatabase,
    request_scope: tuple[str, str | None, str | None],
    chosen: list[text.Term],
    *,
    language: str,
    relevance: str,
    now: float,
    budget: int,
    limit: int,
    entries: Callable[[str, list[Any]], int],
    table: Callable[[], int] = lambda: 0,
    over: Callable[[str], bool] = lambda word: False,
    counted_over: Callable[[str], None] = lambda word: None,
    diagnostics: dict[str, Any] | None = None,
) -> list[Candidate]:
    """The ``limit`` best live matches of ``chosen`` in the scope ``(agent, owner,
    thread)``, each with its relevance negated (:mod:`.ranking`), ranked among at most
    ``budget`` matches: the bound on one recall's work, whatever the memory's size.

    A scope of more than ``budget`` entries has each word's matches counted first
    (each count stops at ``budget + 1``), and the words ranked by are (``mode`` in
    ``diagnostics``, with ``dropped_terms``):

    ``all-words``
        every word, when their matches add up to at most ``budget`` (or the scope
        holds no more entries than that);
    ``rare-words``
        else the rarest words, while their matches add up to at most ``budget``: every
        entry holding one of them is ranked (a common word weighs less in bm25 than
        the rarer ones kept, and reading its matches is what grew with the memory);
    ``common-words``
        when even the rarest word matches more than ``budget`` entries: the newest
        ``budget`` entries holding any of the words.

    Each statement names its words' ``tsquery`` in its ``WHERE`` clause, so PostgreSQL
    plans it for them (with the column's statistics: the GIN index for rare words, the
    scope's index newest first for common ones).

    ``relevance`` ``"bm25"``: each query term weighs by its rarity among the scope's
    entries (its IDF: how many of them match it, of how many), as memory-sqlite's FTS5
    weighs it — ``ts_rank_cd`` has no such weight, so an entry sharing only a common
    word ranks as high as one naming the rare one asked for. ``"ts_rank_cd"``:
    PostgreSQL's cover density rank alone. ``entries(where, params)`` is how many live
    entries the scope holds (its clause given: :class:`.counts.ScopeCounts`).
    """
    where, scope = live_in(request_scope, now)
    held = entries(where, scope)
    asked, mode = len(chosen), "all-words"
    if held <= budget:
        rows = _matches(db, where, scope, chosen, language=language, budget=budget)
    else:
        # Most of the table: by the GIN index, each row's scope checked (_BY_WORDS).
        most = 2 * held >= table()
        matched = where.replace(SCOPE, _BY_WORDS, 1) if most else where
        with db.transaction() if most else contextlib.nullcontext():
            if most:
                db.execute("SET LOCAL enable_seqscan = off")
            chosen, mode = _bounded(
                db,
                matched,
                scope,
                chosen,
                language=language,
                budget=budget,
                over=over,
                counted_over=counted_over,
            )
            # (common words: the scope's newest entries, off its index, hold enough)
            newest = where if mode == "common-words" else matched
            rows = _matches(db, newest, scope, chosen, language=language, budget=budget)
    if diagnostics is not None:
        diagnostics.update(mode=mode, dropped_terms=asked - len(chosen))
    if not rows:
        return []
    if relevance == "ts_rank_cd":
        found = [(int(r[0]), -float(r[4]), float(r[1]), int(r[2])) for r in rows]
    else:
        found = _bm25(rows, len(chosen), max(held, len(rows)))
    found.sort(key=lambda c: (c[1], -c[2]))
    return found[:limit]


_BY_WORDS: Final = SCOPE.replace("agent_id = ?", "agent_id || '' = ?").replace(
    "coalesce(owner, '') = ", "coalesce(owner, '') || '' = "
)
""":data:`SCOPE` where no index serves it: when the scope holds most of the table,
PostgreSQL read the scope's index whole (a bitmap of 50,000 rows at 50,000 entries, 3
to 5 ms) to spare fetching the other scopes' matches of a rare word, or the table from
its start for a common one (``enable_seqscan`` off); each word's matches are read off
the GIN index instead, and their rows checked."""


def _matches(
    db: PluginDatabase,
    where: str,
    scope: list[Any],
    chosen: list[text.Term],
    *,
    language: str,
    budget: int,
) -> list[Any]:
    """The newest ``budget`` live matches of any of ``chosen`` in the scope (``where``
    and ``scope``), each with what ranking reads of it (:func:`_bm25`). Its words'
    ``tsquery`` is in the ``WHERE`` clause, so PostgreSQL plans the statement for them."""
    if not chosen:
        return []
    each = [text.tsquery_text([term]) for term in chosen]
    queries = ", ".join(f"to_tsquery(?::regconfig, ?) AS q{n}" for n in range(len(each)))
    hits = ", ".join(f"search @@ q.q{n}" for n in range(len(each)))
    any_term = " || ".join(f"q.q{n}" for n in range(len(each)))
    params: list[Any] = [p for query in each for p in (language, query)]
    return db.execute(
        f"WITH q AS (SELECT {queries}), "
        f"m AS (SELECT id, updated_at, search, length(text) AS chars FROM {ENTRIES} "
        f"WHERE {where} AND search @@ to_tsquery(?::regconfig, ?) "
        "ORDER BY updated_at DESC LIMIT ?) "
        f"SELECT m.id, m.updated_at, m.chars, length(m.search), "
        f"ts_rank_cd(m.search, {any_term}, {RANK_NORMALIZATION}), {hits} FROM m, q",
        [*params, *scope, language, text.tsquery_text(chosen), budget],
    ).fetchall()


def _bounded(
    db: PluginDatabase,
    where: str,
    scope: list[Any],
    chosen: list[text.Term],
    *,
    language: str,
    budget: int,
    over: Callable[[str], bool],
    counted_over: Callable[[str], None],
) -> tuple[list[text.Term], Mode]:
    """The words of ``chosen`` a recall ranks by, and how they were chosen
    (:func:`candidates`). Each word's matches in the scope are counted up to
    ``budget + 1``, in one statement, but for the words ``over`` says were counted over
    the budget lately (those counted over it now are told to ``counted_over``); words
    matching nothing are left out."""
    words = [text.tsquery_text([term]) for term in chosen]
    matches = [budget + 1 if over(word) else 0 for word in words]
    fresh = [n for n, m in enumerate(matches) if m == 0]
    if fresh:
        counts = ", ".join(
            f"(SELECT count(*) FROM (SELECT 1 FROM {ENTRIES} WHERE {where} "
            f"AND search @@ to_tsquery(?::regconfig, ?) LIMIT ?) AS c{n})"
            for n in fresh
        )
        params: list[Any] = []
        for n in fresh:
            params += [*scope, language, words[n], budget + 1]
        row = db.execute(f"SELECT {counts}", params).fetchone()
        for n, count in zip(fresh, row, strict=True):
            matches[n] = int(count)
            if matches[n] > budget:
                counted_over(words[n])
    counted = sorted((m, n) for n, m in enumerate(matches) if m > 0)
    if sum(m for m, _ in counted) <= budget:
        return [chosen[n] for _, n in sorted(counted, key=lambda c: c[1])], "all-words"
    kept: list[int] = []
    total = 0
    for m, n in counted:
        if total + m > budget:
            break
        kept.append(n)
        total += m
    if kept:
        return [chosen[n] for n in sorted(kept)], "rare-words"
    return [chosen[n] for _, n in sorted(counted, key=lambda c: c[1])], "common-words"


def _bm25(rows: list[Any], terms: int, scope_entries: int) -> list[Candidate]:
    """Each row's bm25 (negated), a term counted once per entry that holds it; document
    frequencies and lengths from the matches (every entry holding a term is one, up to
    the budget) and ``scope_entries``, the scope's live entries (at least the matches)."""
    entries = max(scope_entries, len(rows))
    frequency = [sum(1 for r in rows if r[5 + n]) for n in range(terms)]
    idf = [max(1e-6, math.log((entries - f + 0.5) / (f + 0.5))) for f in frequency]
    average = max(1.0, sum(int(r[3]) for r in rows) / len(rows))
    found = []
    for r in rows:
        norm = K1 * (1 - B + B * int(r[3]) / average)
        score = sum(idf[n] * (K1 + 1) / (1 + norm) for n in range(terms) if r[5 + n])
        found.append((int(r[0]), -score, float(r[1]), int(r[2])))
    return found
