"""Writing a batch: its entries, in one transaction that also prunes what expired
(up to ``prune_batch``), commits the pending use counts and, past ``max_entries``,
drops the scope's longest unused entries; all of it or, on any error, nothing.

With semantic recall on, the batch (and older entries of its scope written while it
was off, up to ``backfill_batch``) is embedded before that transaction opens, so no
lock is held while the model runs; a model that fails fails the batch.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolang_core import PluginDatabase
from toolang_core.memory import MemoryWriteBatch, MemoryWriteResult, kit
from toolang_memory_postgres import semantic, statements, uses
from toolang_memory_postgres.connection import Connection
from toolang_memory_postgres.settings import PROVIDER

Embedded = tuple[semantic.Vectors, list[str], list[tuple[int, str, float]], list[str]]
"""Where the vectors go, the batch's embeddings, older entries without one, theirs."""


def remember_now(
    connection: Connection, pending: kit.PendingUses, batch: MemoryWriteBatch
) -> MemoryWriteResult:
    """Store ``batch`` in one transaction: all of it or, on any error, nothing;
    expired entries (up to ``prune_batch``), the ``pending`` use counts and, past
    ``max_entries``, the longest unused entries of the scope are written with it."""
    settings = connection.settings
    # (a NUL, which PostgreSQL's text cannot hold, is written out by the plugin
    # database's sessions: toolang-store-postgres)
    limit = settings.max_entry_chars
    rows = [
        kit.checked(batch, n, entry, max_chars=limit, failures=connection.failures)
        for n, entry in enumerate(batch.entries)
    ]
    now = connection.clock()
    taken = pending.take()  # the turn's write commits the uses its recall counted
    try:
        with connection.guard("remember"):
            db = connection.database()
            embedded = _embedded(connection, db, batch, rows, now)  # no lock held while it runs
            with connection.transaction(db):
                uses.flush(db, taken)
                pruned = statements.prune(db, now, settings.prune_batch)
                statements.write_rows(
                    db,
                    batch,
                    rows,
                    now=now,
                    language=settings.language,
                    embedded=embedded and (embedded[0].type, embedded[1]),
                )
                if embedded:
                    vectors, _, older, filled = embedded
                    semantic.fill(db, vectors, older, filled)  # written while it was off
                pruned += _cap(connection, db, batch)
    except BaseException:
        pending.restore(taken)
        raise
    counts = connection.counts
    if pruned:
        counts.forget()
    elif any(entry.key is not None for entry in batch.entries):
        counts.forget(batch.agent_id, batch.owner)  # (an upsert inserts or replaces)
    else:
        counts.inserted(batch.agent_id, batch.owner, batch.thread_id, len(rows))
    return MemoryWriteResult(
        written=len(rows), provider=PROVIDER, diagnostics={"pruned_expired": pruned}
    )


def _embedded(
    connection: Connection,
    db: PluginDatabase,
    batch: MemoryWriteBatch,
    rows: Sequence[kit.Row],
    now: float,
) -> Embedded | None:
    """With semantic recall on: where the vectors go, the embeddings of ``rows``'
    bodies, and older entries of the batch's scope without one (up to
    ``backfill_batch``) with theirs — all from one ``embed`` call; else ``None``.

    :raises semantic.SemanticError: the model failed.
    """
    embedder, where, settings = connection.embedder, connection.vectors, connection.settings
    if embedder is None or where is None or not rows:
        return None
    older: list[tuple[int, str, float]] = []
    if settings.backfill_batch:
        with connection.transaction(db):  # waits for a lock no longer than a write does
            scope = (batch.agent_id, batch.owner)
            older = semantic.unembedded(db, scope, now, settings.backfill_batch)
    texts = [statements.body(entry) for entry, _ in rows] + [t for _, t, _ in older]
    name = str(settings.embedding_model)
    vectors = semantic.embed(embedder, name, texts, where.dimensions)
    return where, vectors[: len(rows)], older, vectors[len(rows) :]


def _cap(connection: Connection, db: PluginDatabase, batch: MemoryWriteBatch) -> int:
    """Deleted past ``max_entries`` in the scope ``batch`` wrote to (:func:`.uses.cap`)."""
    limit = connection.settings.max_entries
    if limit is None:
        return 0
    return uses.cap(db, [(batch.agent_id, batch.owner)], limit)
