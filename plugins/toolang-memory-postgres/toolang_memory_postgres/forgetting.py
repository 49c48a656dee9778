"""Deleting entries: those a :class:`MemoryForget` request names, and those that
expired (in batches of ``prune_batch``). Each transaction commits the pending use
counts too, like any write (:mod:`.uses`).
"""

from __future__ import annotations

from toolang_core.memory import MemoryForget, MemoryForgetResult, kit
from toolang_memory_postgres import statements, uses
from toolang_memory_postgres.connection import Connection
from toolang_memory_postgres.schema import ENTRIES
from toolang_memory_postgres.settings import PROVIDER


def forget(
    connection: Connection, pending: kit.PendingUses, request: MemoryForget
) -> MemoryForgetResult:
    """Delete the agent's entries named by key, or matching the filter."""
    taken = pending.take()  # written with it, like any write
    try:
        with connection.guard("forget"):
            db = connection.database()
            with connection.transaction(db):
                uses.flush(db, taken)
                forgotten = sum(
                    db.execute(f"DELETE FROM {ENTRIES} WHERE {where}", params).rowcount
                    for where, params in statements.forget_filters(request)
                )
    except BaseException:
        pending.restore(taken)
        raise
    if forgotten:
        connection.counts.forget()
    return MemoryForgetResult(forgotten=forgotten, provider=PROVIDER)


def prune_batch(connection: Connection, pending: kit.PendingUses) -> int:
    """Delete up to ``prune_batch`` expired entries in a transaction that writes the
    pending uses too (so health() commits them); return how many."""
    with pending.taken() as taken, connection.guard("prune"):
        db = connection.database()
        with connection.transaction(db):
            uses.flush(db, taken)
            removed = statements.prune(db, connection.clock(), connection.settings.prune_batch)
    if removed:
        connection.counts.forget()
    return removed
