"""The ``postgres`` memory plugin: entries in PostgreSQL, recalled with ``tsvector``
full-text search (``ts_rank_cd``) blended with recency.

Every node of a runtime on a PostgreSQL store reads and writes the same rows (the
plugin's schema beside the store's), so what an agent remembers on one node it recalls
on any other in its next turn. ``recall`` and ``remember`` are ``async`` and run their
statements in a worker thread; the others are synchronous and thread-safe. A batch is
written in one transaction that has committed when ``remember`` returns (the runtime
reports the turn's memory write done only then); on any error nothing of it is stored.
A database failure is remembered for :meth:`PostgresMemory.health` and raised as
:class:`PostgresMemoryError` naming the operation and the database; a batch the plugin
refuses (too long, bad TTL, meta that is not JSON) raises ``ValueError``.

With ``semantic = true`` (:mod:`.semantic`) each batch is embedded before its
transaction opens (no lock is held while the model runs) and written with its
embeddings in that one transaction; a model that fails fails the batch (nothing
stored). A recall whose query cannot be embedded falls back to full-text recall (its
diagnostics and ``health`` say why).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from typing import Any

from toolang_core import PluginDatabase
from toolang_core.memory import (
    MemoryForget,
    MemoryForgetResult,
    MemoryHealth,
    MemoryItem,
    MemoryListRequest,
    MemoryRecallRequest,
    MemoryRecallResult,
    MemoryWriteBatch,
    MemoryWriteResult,
    kit,
)
from toolang_core.models import EmbeddingModel
from toolang_memory_postgres import semantic, statements, uses
from toolang_memory_postgres.errors import PostgresMemoryError, failures
from toolang_memory_postgres.ranking import Candidate
from toolang_memory_postgres.schema import ENTRIES
from toolang_memory_postgres.settings import PROVIDER, MemoryPostgresSettings
from toolang_memory_postgres.statements import LIVE, SCOPE

__all__ = ["PostgresMemory", "PostgresMemoryError"]


class PostgresMemory:
    """Entries of every agent in the plugin's PostgreSQL schema.

    ``open_database`` returns the plugin's database, migrated (the runtime's
    ``plugin_databases`` offer for the plugin); it is called on first use and again
    after :meth:`close`. ``embedder`` is the embedding model ``settings.embedding_model``
    names, required when ``settings.semantic`` is on.
    """

    def __init__(
        self,
        open_database: Callable[[], PluginDatabase],
        settings: MemoryPostgresSettings | None = None,
        *,
        clock: Callable[[], float] = time.time,
        embedder: EmbeddingModel | None = None,
    ) -> None:
        self.settings = settings or MemoryPostgresSettings()
        if self.settings.semantic and embedder is None:
            raise ValueError(f"{PROVIDER}: semantic = true needs an embedding model")
        self._embedder = embedder if self.settings.semantic else None
        self._vectors: semantic.Vectors | None = None
        self._open = open_database
        self._clock = clock
        self._db: PluginDatabase | None = None
        self._db_lock = threading.Lock()
        self._last_error = failures(clock)
        self._guard = self._last_error.guard
        self._uses = kit.PendingUses()  # written behind (see .uses)

    # -- the contract ---------------------------------------------------------------------

    async def recall(self, request: MemoryRecallRequest) -> MemoryRecallResult:
        """:meth:`recall_now` in a worker thread."""
        return await asyncio.to_thread(self.recall_now, request)

    def recall_now(self, request: MemoryRecallRequest) -> MemoryRecallResult:
        """The agent's entries that best match ``request.query_text``: the newest
        ``ranked_matches`` matches ranked (``relevance``), the best ``candidates``
        blended with recency and uses and cut to the request's limits
        (:func:`toolang_core.memory.kit.rank`); each returned entry counts one use
        (committed later, :mod:`.uses`)."""
        recalling = kit.Recalling.of(request, self.settings.max_query_terms)
        chosen, diagnostics = recalling.terms, recalling.diagnostics
        ranked: list[kit.Ranked[Candidate]] = []
        items: tuple[MemoryItem, ...] = ()
        now = self._clock()
        by_meaning = self._embedder is not None and bool(request.query_text.strip())
        if chosen or by_meaning:
            with self._guard("recall"):
                db = self._database()
                scope = (request.agent_id, request.owner, request.thread_id)
                found: list[Candidate] = []
                if chosen:
                    found = statements.candidates(
                        db,
                        scope,
                        chosen,
                        language=self.settings.language,
                        relevance=self.settings.relevance,
                        now=now,
                        budget=self.settings.ranked_matches,
                        limit=self.settings.candidates,
                    )
                if by_meaning:
                    found = self._by_meaning(
                        db, scope, request.query_text, found=found, now=now, diagnostics=diagnostics
                    )
                usages = self._usages(db, found, now)
                ranked = kit.rank(found, request.limits, self.settings, now=now, usages=usages)
                # one use of each item counted (pending), carried by the items
                counted = self._uses.add([r.candidate[0] for r in ranked], now)
                items = _ranked_items(db, ranked, counted)
                diagnostics["candidates"] = len(found)
            self._flush_if_full()
        return recalling.result(PROVIDER, items, ranked)

    async def remember(self, batch: MemoryWriteBatch) -> MemoryWriteResult:
        """:meth:`remember_now` in a worker thread: returns once ``batch`` is committed."""
        return await asyncio.to_thread(self.remember_now, batch)

    def remember_now(self, batch: MemoryWriteBatch) -> MemoryWriteResult:
        """Store ``batch`` in one transaction: all of it or, on any error, nothing;
        expired entries (up to ``prune_batch``), the pending use counts and, past
        ``max_entries``, the least used entries of the scope are written with it."""
        limit, refused = self.settings.max_entry_chars, statements.refused
        rows = [
            kit.checked(batch, n, entry, max_chars=limit, failures=self._last_error, refuse=refused)
            for n, entry in enumerate(batch.entries)
        ]
        now = self._clock()
        taken = self._uses.take()  # the turn's write commits the uses its recall counted
        try:
            with self._guard("remember"):
                db = self._database()
                embedded = self._embedded(db, batch, rows, now)  # no lock held while it runs
                with db.transaction():
                    self._wait_at_most(db)
                    uses.flush(db, taken)
                    pruned = statements.prune(db, now, self.settings.prune_batch)
                    statements.write_rows(
                        db,
                        batch,
                        rows,
                        now=now,
                        language=self.settings.language,
                        embedded=embedded and (embedded[0].type, embedded[1]),
                    )
                    if embedded:
                        vectors, _, older, filled = embedded
                        semantic.fill(db, vectors, older, filled)  # written while it was off
                    pruned += self._cap(db, batch)
        except BaseException:
            self._uses.restore(taken)
            raise
        return MemoryWriteResult(
            written=len(rows), provider=PROVIDER, diagnostics={"pruned_expired": pruned}
        )

    def forget(self, request: MemoryForget) -> MemoryForgetResult:
        """Delete the agent's entries named by key, or matching the filter."""
        taken = self._uses.take()  # written with it, like any write
        try:
            with self._guard("forget"):
                db = self._database()
                with db.transaction():
                    self._wait_at_most(db)
                    uses.flush(db, taken)
                    forgotten = sum(
                        db.execute(f"DELETE FROM {ENTRIES} WHERE {where}", params).rowcount
                        for where, params in statements.forget_filters(request)
                    )
        except BaseException:
            self._uses.restore(taken)
            raise
        return MemoryForgetResult(forgotten=forgotten, provider=PROVIDER)

    def list_entries(self, request: MemoryListRequest) -> tuple[MemoryItem, ...]:
        """The agent's live entries (of one thread, when given), newest write first."""
        scope = (SCOPE, [request.agent_id, request.owner, request.owner])
        sql, params = kit.list_statement(request, ENTRIES, scope, LIVE, self._clock())
        with self._guard("list_entries"):
            return kit.listed(self._database().execute(sql, params), self._uses)

    def health(self) -> MemoryHealth:
        """Entries and size after pruning what expired (a prune that fails, e.g. for a
        lock held elsewhere, is kept as the last error); ``down`` when the server fails."""
        return kit.health_after_pruning(
            self._last_error, PROVIDER, prune=self.prune, measure=self._measure
        )

    def _measure(self) -> tuple[str, int, int | None]:
        """What ``health`` says: where the entries are, how many, their size in bytes."""
        entries, size = (
            self._database()
            .execute(f"SELECT count(*), pg_total_relation_size('{ENTRIES}') FROM {ENTRIES}")
            .fetchone()
        )
        return f"{entries} entries at {self._last_error.where}", int(entries), int(size)

    def prune(self) -> int:
        """Delete every expired entry (in batches of ``prune_batch``); return how many."""
        return kit.prune_all(self._prune_batch, self.settings.prune_batch)

    def _prune_batch(self) -> int:
        """Delete up to ``prune_batch`` expired entries in a transaction that writes the
        pending uses too (so health() commits them); return how many."""
        with self._uses.taken() as taken, self._guard("prune"):
            db = self._database()
            with db.transaction():
                self._wait_at_most(db)
                uses.flush(db, taken)
                return statements.prune(db, self._clock(), self.settings.prune_batch)

    def close(self) -> None:
        """Commit the pending uses (best effort), then close the database's connections
        (it opens again on next use)."""
        self._uses.write_last(self._flush("close"), (PostgresMemoryError,))
        with self._db_lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()

    # -- helpers --------------------------------------------------------------------------

    def _database(self) -> PluginDatabase:
        with self._db_lock:
            if self._db is None:
                db = self._open()
                self._last_error.where = db.where
                if self._embedder is not None:
                    try:
                        self._vectors = semantic.prepare(
                            db,
                            self._embedder,
                            str(self.settings.embedding_model),
                            lock_timeout_ms=self._lock_timeout_ms(),
                        )
                    except BaseException:
                        db.close()
                        raise
                self._db = db
            return self._db

    def _embedded(
        self,
        db: PluginDatabase,
        batch: MemoryWriteBatch,
        rows: Sequence[kit.Row],
        now: float,
    ) -> tuple[semantic.Vectors, list[str], list[tuple[int, str, float]], list[str]] | None:
        """With semantic recall on: where the vectors go, the embeddings of ``rows``'
        bodies, and older entries of the batch's scope without one (up to
        ``backfill_batch``) with theirs — all from one ``embed`` call; else ``None``.

        :raises semantic.SemanticError: the model failed.
        """
        if self._embedder is None or self._vectors is None or not rows:
            return None
        older: list[tuple[int, str, float]] = []
        if self.settings.backfill_batch:
            with db.transaction():  # waits for a lock no longer than a write does
                self._wait_at_most(db)
                scope = (batch.agent_id, batch.owner)
                older = semantic.unembedded(db, scope, now, self.settings.backfill_batch)
        texts = [statements.body(entry) for entry, _ in rows] + [t for _, t, _ in older]
        name = str(self.settings.embedding_model)
        vectors = semantic.embed(self._embedder, name, texts, self._vectors.dimensions)
        return self._vectors, vectors[: len(rows)], older, vectors[len(rows) :]

    def _by_meaning(
        self,
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
        assert self._embedder is not None
        assert self._vectors is not None
        name = str(self.settings.embedding_model)
        try:
            (query,) = semantic.embed(self._embedder, name, [query_text], self._vectors.dimensions)
        except semantic.SemanticError as exc:
            self._last_error.record(str(exc))
            diagnostics["semantic_error"] = str(exc)
            return found
        near = semantic.nearest(
            db,
            self._vectors,
            scope,
            query,
            also=[c[0] for c in found],
            now=now,
            settings=self.settings,
        )
        diagnostics["similar"] = len(near)
        merged = semantic.hybrid(found, near, self.settings.semantic_weight)
        merged.sort(key=lambda c: (c[1], -c[2]))
        return merged[: self.settings.candidates + self.settings.semantic_candidates]

    def _flush_if_full(self) -> None:
        """Commit the pending uses once ``pending_uses`` entries wait (the bound of the
        write-behind), in a transaction of their own; on failure they are kept for the
        next recall or write."""
        if len(self._uses) < self.settings.pending_uses:
            return
        with suppress(PostgresMemoryError), self._uses.taken() as taken:
            self._flush("recall")(taken)

    def _flush(self, operation: str) -> Callable[[Mapping[int, tuple[int, float]]], None]:
        """Commit pending uses (taken), for ``operation``, in a transaction of their own."""

        def flush(taken: Mapping[int, tuple[int, float]]) -> None:
            with self._guard(operation):
                db = self._database()
                with db.transaction():
                    self._wait_at_most(db)
                    uses.flush(db, taken)

        return flush

    def _usages(
        self, db: PluginDatabase, candidates: Sequence[Candidate], now: float
    ) -> dict[int, float] | None:
        """What the candidates' uses, stored (one read) and pending, add to their ranking
        (:func:`toolang_core.memory.kit.usages`); ``None`` when uses do not count."""
        if self.settings.use_weight <= 0.0 or not candidates:
            return None
        ids = [c[0] for c in candidates]
        stored = uses.stored(db, ids)
        return kit.usages(
            ((i, *stored.get(i, (0, None))) for i in ids),
            self._uses.get(ids),
            now=now,
            threshold=self.settings.use_threshold,
            saturation=self.settings.use_saturation,
            half_life_days=self.settings.recency_half_life_days,
        )

    def _cap(self, db: PluginDatabase, batch: MemoryWriteBatch) -> int:
        """Deleted past ``max_entries`` in the scope ``batch`` wrote to (:func:`.uses.cap`)."""
        limit = self.settings.max_entries
        if limit is None:
            return 0
        return uses.cap(db, [(batch.agent_id, batch.owner)], limit)

    def _wait_at_most(self, db: PluginDatabase) -> None:
        """This transaction waits at most ``lock_timeout_seconds`` for a lock."""
        db.execute("SELECT set_config('lock_timeout', ?, true)", [f"{self._lock_timeout_ms()}ms"])

    def _lock_timeout_ms(self) -> int:
        return max(1, round(self.settings.lock_timeout_seconds * 1000))


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
        f"SELECT {kit.ITEM_COLUMNS}, substr(text, 1, ?) FROM {ENTRIES} WHERE id = ANY(?)",
        [kit.read_chars(ranked), ids],
    )
    return kit.ranked_items(ranked, rows, counted)
