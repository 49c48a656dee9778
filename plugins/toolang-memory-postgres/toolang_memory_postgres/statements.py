"""The plugin's SQL: writes (upserted by key), recall candidates, forgetting filters and
pruning. Each function runs in the caller's transaction, if any.

Owners are compared as the unique key index spells them (``coalesce(owner, '')``),
and again exactly (``IS NOT DISTINCT FROM``), so one owner's rows never reach another.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

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
) -> list[Candidate]:
    """The ``limit`` best live matches of ``chosen`` in the scope ``(agent, owner,
    thread)``, of its newest ``budget`` matches (the bound on one recall's work, whatever
    the memory's size), each with its relevance negated (:mod:`.ranking`).

    ``relevance`` ``"bm25"``: each query term weighs by its rarity among the scope's
    entries (its IDF: how many of them match it, of how many), as memory-sqlite's FTS5
    weighs it — ``ts_rank_cd`` has no such weight, so an entry sharing only a common
    word ranks as high as one naming the rare one asked for. ``"ts_rank_cd"``:
    PostgreSQL's cover density rank alone. ``entries(where, params)`` is how many live
    entries the scope holds (its clause given: :class:`.counts.ScopeCounts`), asked
    for bm25 only.
    """
    where, scope = live_in(request_scope, now)
    each = [text.tsquery_text([term]) for term in chosen]
    queries = ", ".join(f"to_tsquery(?::regconfig, ?) AS q{n}" for n in range(len(each)))
    hits = ", ".join(f"search @@ q.q{n}" for n in range(len(each)))
    any_term = " || ".join(f"q.q{n}" for n in range(len(each)))
    params: list[Any] = [p for query in each for p in (language, query)]
    rows = db.execute(
        f"WITH q AS (SELECT {queries}), "
        f"m AS (SELECT id, updated_at, search, length(text) AS chars FROM {ENTRIES}, q "
        f"WHERE {where} AND search @@ ({any_term}) ORDER BY updated_at DESC LIMIT ?) "
        f"SELECT m.id, m.updated_at, m.chars, length(m.search), "
        f"ts_rank_cd(m.search, {any_term}, {RANK_NORMALIZATION}), {hits} FROM m, q",
        [*params, *scope, budget],
    ).fetchall()
    if not rows:
        return []
    if relevance == "ts_rank_cd":
        found = [(int(r[0]), -float(r[4]), float(r[1]), int(r[2])) for r in rows]
    else:
        found = _bm25(rows, len(each), entries(where, scope))
    found.sort(key=lambda c: (c[1], -c[2]))
    return found[:limit]


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
