"""Use counts written behind, read, and the least used entries dropped past
``max_entries`` (memory-sqlite's rules and settings: :mod:`toolang_core.memory.kit`).

A recall counts the uses of what it returns in memory
(:class:`toolang_core.memory.kit.PendingUses`, per plugin object: each node counts its
own); this module writes them: by the next write's transaction (a turn's memory write,
``forget``, pruning — one batched ``UPDATE … FROM unnest(…)`` in that same commit) or,
once :attr:`~.settings.MemoryPostgresSettings.pending_uses` entries are waiting, by the
recall that reaches the bound, in a transaction of its own. ``health`` and ``close``
write them too. Counts from several nodes add up (each adds its own to the stored count).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from toolang_core import PluginDatabase
from toolang_core.memory.kit import Use
from toolang_memory_postgres.schema import ENTRIES
from toolang_memory_postgres.statements import SCOPE

_LOCK: Final = f"SELECT id FROM {ENTRIES} WHERE id = ANY(?) ORDER BY id FOR UPDATE"
"""The rows about to be counted, locked in id order (two nodes flushing at once wait
for each other instead of deadlocking)."""
_FLUSH: Final = (
    f"UPDATE {ENTRIES} AS e SET use_count = e.use_count + u.n, "
    "last_used_at = greatest(e.last_used_at, u.at) "
    "FROM unnest(?::bigint[], ?::bigint[], ?::double precision[]) AS u(id, n, at) "
    "WHERE e.id = u.id"
)


def flush(db: PluginDatabase, taken: Mapping[int, tuple[int, float]]) -> None:
    """Add ``taken`` to the stored counts, in the caller's transaction: one batched
    ``UPDATE`` (an entry deleted meanwhile is skipped: it matches nothing)."""
    if not taken:
        return
    ids = sorted(taken)
    db.execute(_LOCK, [ids])
    db.execute(_FLUSH, [ids, [taken[i][0] for i in ids], [taken[i][1] for i in ids]])


def stored(db: PluginDatabase, ids: Sequence[int]) -> dict[int, Use]:
    """The stored uses of those of ``ids`` ever recalled (one read by primary key)."""
    if not ids:
        return {}
    rows = db.execute(
        f"SELECT id, use_count, last_used_at FROM {ENTRIES} WHERE id = ANY(?) AND use_count > 0",
        [list(ids)],
    )
    return {int(row[0]): (int(row[1]), row[2]) for row in rows}


def cap(db: PluginDatabase, scopes: Iterable[tuple[str, str | None]], limit: int) -> int:
    """Delete what is over ``limit`` entries in each ``(agent_id, owner)`` scope, least
    used first: never recalled before recalled, then the longest unused (its last
    use, or its last write when never used), then the oldest id. Returns how many."""
    removed = 0
    for agent, owner in set(scopes):
        params: list[Any] = [agent, owner, owner]
        removed += db.execute(
            f"DELETE FROM {ENTRIES} WHERE id IN (SELECT id FROM {ENTRIES} WHERE {SCOPE} "
            "ORDER BY use_count > 0, coalesce(last_used_at, updated_at), id "
            f"LIMIT greatest(0, (SELECT count(*) FROM {ENTRIES} WHERE {SCOPE}) - ?))",
            [*params, *params, limit],
        ).rowcount
    return removed
