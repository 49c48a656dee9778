"""Use counts written behind, read, and the longest unused entries dropped past
``max_entries`` (memory-sqlite's rules and settings: :mod:`toolang_core.memory.kit`).

A recall counts the uses of what it returns in memory
(:class:`toolang_core.memory.kit.PendingUses`, per plugin object: each node counts its
own); this module writes them: by the next write's transaction (a turn's memory write,
``forget``, pruning — one batched upsert from ``unnest(…)`` in that same commit) or,
once :attr:`~.settings.MemoryPostgresSettings.pending_uses` entries are waiting, by the
recall that reaches the bound, in a transaction of its own. ``health`` and ``close``
write them too. Counts from several nodes add up (each adds its own to the stored count).
They live in the narrow table ``memory_uses`` (``schema.m003_uses_of_their_own``), not on
the entries' rows: counting a use writes a row of three numbers, not a new version of
the entry with its text, full-text vector and embedding.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from toolang_core import PluginDatabase
from toolang_core.memory.kit import Use
from toolang_memory_postgres.schema import ENTRIES, USES
from toolang_memory_postgres.statements import SCOPE

_LOCK: Final = f"SELECT id FROM {ENTRIES} WHERE id = ANY(?) ORDER BY id FOR NO KEY UPDATE"
"""The entries about to be counted, locked in id order until the commit: two nodes
counting the same entries wait for each other at the entries (never one at an entry
and the other at its uses: that deadlocked when one of them was deleting it); one
deleted meanwhile is left out, and one deleted later takes its uses along (the delete
waits for this transaction, then its trigger finds them). The lock writes no new
version of the entry."""
_FLUSH: Final = (
    f"INSERT INTO {USES} AS s (id, use_count, last_used_at) "
    "SELECT u.id, u.n, u.at FROM unnest(?::bigint[], ?::bigint[], ?::double precision[]) "
    f"AS u(id, n, at) JOIN {ENTRIES} AS e ON e.id = u.id ORDER BY u.id "
    "ON CONFLICT (id) DO UPDATE SET use_count = s.use_count + excluded.use_count, "
    "last_used_at = greatest(s.last_used_at, excluded.last_used_at)"
)
"""Added to the stored counts (of the entries still there, locked by :data:`_LOCK`)."""


def flush(db: PluginDatabase, taken: Mapping[int, tuple[int, float]]) -> None:
    """Add ``taken`` to the stored counts, in the caller's transaction: one batched
    upsert (an entry deleted meanwhile is skipped: it matches nothing)."""
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
        f"SELECT id, use_count, last_used_at FROM {USES} WHERE id = ANY(?) AND use_count > 0",
        [list(ids)],
    )
    return {int(row[0]): (int(row[1]), row[2]) for row in rows}


_NEVER_USED: Final = (
    f"SELECT e.updated_at, e.id FROM {ENTRIES} AS e WHERE {SCOPE} "
    f"AND NOT EXISTS (SELECT 1 FROM {USES} AS u WHERE u.id = e.id AND u.use_count > 0) "
    "ORDER BY e.agent_id, coalesce(e.owner, ''), e.updated_at, e.id LIMIT ?"
)
"""A scope's never-recalled entries, oldest write first: in the order of the
``(agent_id, coalesce(owner, ''), updated_at)`` index, passing over the recalled ones."""
_LEAST_USED: Final = (
    f"SELECT coalesce(u.last_used_at, 0), u.id FROM {USES} AS u CROSS JOIN LATERAL "
    f"(SELECT agent_id, owner FROM {ENTRIES} AS e WHERE e.id = u.id OFFSET 0) AS e "
    f"WHERE u.use_count > 0 AND {SCOPE} ORDER BY u.last_used_at NULLS FIRST, u.id LIMIT ?"
)
"""A scope's recalled entries, longest unused first: every recalled entry (of any
scope; far fewer than the entries) reads its entry's scope by id (``OFFSET 0`` keeps
the scope out of that probe: given it, the planner may read the scope's entries for
each use instead, and a join may read every entry of the table)."""
_COUNT: Final = f"SELECT count(*) FROM {ENTRIES} AS e WHERE {SCOPE}"


def cap(db: PluginDatabase, scopes: Iterable[tuple[str, str | None]], limit: int) -> int:
    """Delete what is over ``limit`` entries in each ``(agent_id, owner)`` scope, the
    longest unused first: by an entry's last use, or its write when it was never
    recalled (then the oldest id). Returns how many.

    The scope's entries are counted; only when they are over the limit are the oldest
    never-recalled ones read off the scope's index by last write, and the longest
    unused recalled ones from the uses: the ``over`` oldest of the two go. (Before, every
    capped write sorted all the scope's entries, each probing its uses: 0.5 s a write
    at 50,000 entries once the table's statistics were gathered.)"""
    removed = 0
    for agent, owner in set(scopes):
        scope: list[Any] = [agent, owner, owner]
        over = int(db.execute(_COUNT, scope).fetchone()[0]) - limit
        if over <= 0:
            continue
        never = [(float(r[0]), int(r[1])) for r in db.execute(_NEVER_USED, [*scope, over])]
        used = [(float(r[0]), int(r[1])) for r in db.execute(_LEAST_USED, [*scope, over])]
        ids = [i for _, i in heapq.nsmallest(over, [*never, *used])]
        removed += db.execute(f"DELETE FROM {ENTRIES} WHERE id = ANY(?)", [ids]).rowcount
    return removed
