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

The class is the contract; the work is in modules of one purpose each: the database
and its transactions (:mod:`.connection`), recall (:mod:`.recall`), writing a batch
(:mod:`.writing`), forgetting and pruning (:mod:`.forgetting`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

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
from toolang_memory_postgres import forgetting, recall, writing
from toolang_memory_postgres.connection import Connection
from toolang_memory_postgres.errors import PostgresMemoryError
from toolang_memory_postgres.schema import ENTRIES, ITEMS, USES
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
        self._connection = Connection(
            open_database,
            self.settings,
            clock=clock,
            embedder=embedder if self.settings.semantic else None,
        )
        self._clock = clock
        self._last_error = self._connection.failures
        self._guard = self._connection.guard
        self._uses = kit.PendingUses()  # written behind (see .uses)

    # -- the contract ---------------------------------------------------------------------

    async def recall(self, request: MemoryRecallRequest) -> MemoryRecallResult:
        """:meth:`recall_now` in a worker thread."""
        return await asyncio.to_thread(self.recall_now, request)

    def recall_now(self, request: MemoryRecallRequest) -> MemoryRecallResult:
        """The agent's entries that best match ``request.query_text``
        (:func:`.recall.recall_now`); each returned entry counts one use."""
        return recall.recall_now(self._connection, self._uses, request)

    async def remember(self, batch: MemoryWriteBatch) -> MemoryWriteResult:
        """:meth:`remember_now` in a worker thread: returns once ``batch`` is committed."""
        return await asyncio.to_thread(self.remember_now, batch)

    def remember_now(self, batch: MemoryWriteBatch) -> MemoryWriteResult:
        """Store ``batch`` in one transaction: all of it or, on any error, nothing
        (:func:`.writing.remember_now`)."""
        return writing.remember_now(self._connection, self._uses, batch)

    def forget(self, request: MemoryForget) -> MemoryForgetResult:
        """Delete the agent's entries named by key, or matching the filter."""
        return forgetting.forget(self._connection, self._uses, request)

    def list_entries(self, request: MemoryListRequest) -> tuple[MemoryItem, ...]:
        """The agent's live entries (of one thread, when given), newest write first."""
        scope = (SCOPE, [request.agent_id, request.owner, request.owner])
        sql, params = kit.list_statement(request, ITEMS, scope, LIVE, self._clock())
        with self._guard("list_entries"):
            return kit.listed(self._connection.database().execute(sql, params), self._uses)

    def health(self) -> MemoryHealth:
        """Entries and size after pruning what expired (a prune that fails, e.g. for a
        lock held elsewhere, is kept as the last error); ``down`` when the server fails."""
        return kit.health_after_pruning(
            self._last_error, PROVIDER, prune=self.prune, measure=self._measure
        )

    def _measure(self) -> tuple[str, int, int | None]:
        """What ``health`` says: where the entries are, how many, their size in bytes."""
        entries, size = (
            self._connection.database()
            .execute(
                f"SELECT count(*), pg_total_relation_size('{ENTRIES}') "
                f"+ pg_total_relation_size('{USES}') FROM {ENTRIES}"
            )
            .fetchone()
        )
        return f"{entries} entries at {self._last_error.where}", int(entries), int(size)

    def prune(self) -> int:
        """Delete every expired entry (in batches of ``prune_batch``); return how many."""
        return kit.prune_all(
            lambda: forgetting.prune_batch(self._connection, self._uses),
            self.settings.prune_batch,
        )

    def close(self) -> None:
        """Commit the pending uses (best effort), then close the database's connections
        (it opens again on next use)."""
        self._uses.write_last(self._connection.flush("close"), (PostgresMemoryError,))
        self._connection.close()
