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

from toolang_memory_sqlite.database import WriteBusy
from toolang_memory_sqlite.schema import AGENTS, ENTRIES, FTS, SEQ_BITS, USES
from toolang_memory_sqlite.search import scope_key

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


_NEVER_USED: Final = (
    f"SELECT e.id FROM {ENTRIES} AS e INDEXED BY {ENTRIES}_agent_updated "
    "WHERE e.agent_id = ? AND e.owner IS ? "
    f"AND NOT EXISTS (SELECT 1 FROM {USES} AS u WHERE u.id = e.id AND u.use_count > 0) "
    "ORDER BY e.updated_at, e.id LIMIT ?"
)
"""A scope's never-recalled entries, oldest write first (in index order: no sort)."""
_LEAST_USED: Final = (
    f"SELECT u.id FROM {USES} AS u CROSS JOIN {ENTRIES} AS e ON e.id = u.id "
    "WHERE u.id BETWEEN ? AND ? AND u.use_count > 0 "
    "ORDER BY coalesce(u.last_used_at, e.updated_at), u.id LIMIT ?"
)
"""A scope's recalled entries (its id range of ``memory_uses``), longest unused first."""
_IDS_PER_DELETE: Final = 10_000
"""Ids bound to one ``DELETE`` (SQLite takes at most 32,766 values in a statement): a
cap lowered far below a scope's entries deletes them all at the next write."""


class LongCap(WriteBusy):
    """A write not to wait would have a cap delete more than it may (:func:`cap`'s
    ``most``): the caller rolls it back and has it done where it may take long."""


def cap(
    conn: sqlite3.Connection,
    scopes: Iterable[tuple[str, str | None]],
    limit: int,
    *,
    most: int | None = None,
) -> int:
    """Delete what is over ``limit`` entries in each ``(agent_id, owner)`` scope, least
    used first: never recalled before recalled, then the longest unused (its last
    use, or its last write when never used), then the oldest id. Returns how many.
    :raises LongCap: a scope is more than ``most`` over (nothing deleted in it).

    Bounded work for a scope at its limit: the count is read, not counted
    (``memory_agents.entries``, :func:`.schema.m005_entry_counts`); the never-recalled
    are read oldest write first off the ``(agent_id, updated_at)`` index, passing over
    the recalled ones before them; only when those are not enough are the scope's
    recalled entries sorted (by their last use)."""
    removed = 0
    for agent, owner in set(scopes):
        row = conn.execute(
            f"SELECT slot, entries FROM {AGENTS} WHERE agent_id = ?", (scope_key(agent, owner),)
        ).fetchone()
        if row is None or row[1] <= limit:
            continue
        low, over = row[0] << SEQ_BITS, row[1] - limit
        if most is not None and over > most:
            raise LongCap(f"max_entries: {over} entries to delete, more than {most}")
        ids = [r[0] for r in conn.execute(_NEVER_USED, (agent, owner, over))]
        if len(ids) < over:
            high = low + (1 << SEQ_BITS) - 1
            ids += [r[0] for r in conn.execute(_LEAST_USED, (low, high, over - len(ids)))]
        for start in range(0, len(ids), _IDS_PER_DELETE):
            chunk = ids[start : start + _IDS_PER_DELETE]
            marks = ", ".join("?" * len(chunk))
            conn.execute(f"DELETE FROM {FTS} WHERE rowid IN ({marks})", chunk)
            conn.execute(f"DELETE FROM {ENTRIES} WHERE id IN ({marks})", chunk)
        removed += len(ids)
    return removed
