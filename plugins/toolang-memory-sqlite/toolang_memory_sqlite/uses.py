"""Use counts written behind, and the least used entries dropped past ``max_entries``.

A recall counts the uses of what it returns in memory
(:class:`toolang_core.memory.kit.PendingUses`, whose docstring says why and what they
are worth in ranking); this module writes them: by the next write's transaction (a
turn's memory write, ``forget``, pruning — one upsert per entry into the narrow
``memory_uses`` in that same commit)
or, once :attr:`~.settings.MemorySQLiteSettings.pending_uses` entries are waiting, by the
plugin's database thread in a transaction of its own, handed to it by the recall that
reaches the bound (which does not wait for it). ``health`` and ``close``
write them too.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Final

from toolang_memory_sqlite.schema import ENTRIES, FTS, ITEMS, USES

_FLUSH: Final = (
    f"INSERT INTO {USES} (id, use_count, last_used_at) "
    "SELECT e.id, json_extract(u.value, '$[0]'), json_extract(u.value, '$[1]') "
    "FROM json_each(?) AS u "
    f"JOIN {ENTRIES} AS e ON e.id = CAST(u.key AS INTEGER) WHERE true "
    "ON CONFLICT (id) DO UPDATE SET use_count = use_count + excluded.use_count, "
    "last_used_at = max(coalesce(last_used_at, 0), excluded.last_used_at)"
)
"""One statement for all of them, ``{id: [count, last_used_at]}`` as JSON: SQLite does
the work without taking Python's lock back between entries (a statement per entry
hands it back and forth with the threads recalling meanwhile)."""


def flush(conn: sqlite3.Connection, taken: Mapping[int, tuple[int, float]]) -> None:
    """Add ``taken`` to the stored counts, in the caller's transaction (an entry deleted
    meanwhile is skipped: it joins nothing)."""
    if taken:
        # JSON has no infinity or NaN: a use at such a time (a broken clock) counts, at
        # no known time (the entry keeps its last)
        finite = {i: (n, at if math.isfinite(at) else 0.0) for i, (n, at) in taken.items()}
        conn.execute(_FLUSH, (json.dumps(finite, allow_nan=False),))


def cap(conn: sqlite3.Connection, scopes: Iterable[tuple[str, str | None]], limit: int) -> int:
    """Delete what is over ``limit`` entries in each ``(agent_id, owner)`` scope, least
    used first: never recalled before recalled, then the longest unused (its last
    use, or its last write when never used), then the oldest id. Returns how many."""
    removed = 0
    for agent, owner in set(scopes):
        (count,) = conn.execute(
            f"SELECT count(*) FROM {ENTRIES} WHERE agent_id = ? AND owner IS ?", (agent, owner)
        ).fetchone()
        if count <= limit:
            continue
        ids = [
            row[0]
            for row in conn.execute(
                f"SELECT id FROM {ITEMS} WHERE agent_id = ? AND owner IS ? "
                "ORDER BY use_count > 0, coalesce(last_used_at, updated_at), id LIMIT ?",
                (agent, owner, count - limit),
            )
        ]
        marks = ", ".join("?" * len(ids))
        conn.execute(f"DELETE FROM {FTS} WHERE rowid IN ({marks})", ids)
        conn.execute(f"DELETE FROM {ENTRIES} WHERE id IN ({marks})", ids)
        removed += len(ids)
    return removed
