"""Use counts written behind, and the longest unused entries dropped past ``max_entries``.

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

import heapq
import json
import math
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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
    f"SELECT e.updated_at, e.id FROM {ENTRIES} AS e INDEXED BY {ENTRIES}_scope_updated "
    "WHERE e.agent_id = ? AND e.owner IS ? "
    f"AND NOT EXISTS (SELECT 1 FROM {USES} AS u WHERE u.id = e.id AND u.use_count > 0) "
    "ORDER BY e.updated_at, e.id LIMIT ?"
)
"""A scope's never-recalled entries, oldest write first: in the order of the
``(agent_id, owner, updated_at)`` index, passing over the recalled ones (no sort)."""
_LEAST_USED: Final = (
    f"SELECT coalesce(u.last_used_at, 0.0), u.id FROM {USES} AS u "
    f"INDEXED BY {USES}_scope_used WHERE u.id >> {SEQ_BITS} = ? AND u.use_count > 0 "
    "ORDER BY u.last_used_at, u.id LIMIT ?"
)
"""A scope's recalled entries (its slot of ``memory_uses``), longest unused first: in
the order of the ``(id >> SEQ_BITS, last_used_at)`` index."""
_IDS_PER_DELETE: Final = 10_000
"""Ids bound to one ``DELETE`` (SQLite takes at most 32,766 values in a statement): a
cap lowered far below a scope's entries deletes them all at the next write."""
AT_ONCE_STEPS: Final = 100
"""How long a cap not to wait (:func:`cap`'s ``most``) may look for the entries to
delete: SQLite's progress handler is called every 1,000 instructions of its program;
at the 100th call the cap gives up (about 2 ms here; recalled entries older than every
never-recalled one are passed over at each write)."""


class LongCap(WriteBusy):
    """A write not to wait would have a cap delete more than it may, or look for them
    longer (:func:`cap`'s ``most``): the caller rolls it back and has it done where it
    may take long."""


def cap(
    conn: sqlite3.Connection,
    scopes: Mapping[tuple[str, str | None], int],
    limit: int,
    *,
    most: int | None = None,
) -> int:
    """Delete what is over ``limit`` entries in each ``(agent_id, owner)`` scope of
    ``scopes`` (each with the entries just written to it), the longest unused first:
    by an entry's last use, or its write when it was never recalled (then the oldest
    id). Returns how many.

    :raises LongCap: ``most`` given, and more than it and the entries just written are
        to go in all, or finding them takes longer than :data:`AT_ONCE_STEPS`.

    The count is read, not counted (``memory_agents.entries``,
    :func:`.schema.m005_entry_counts`); the never-recalled are read oldest write first
    off the ``(agent_id, owner, updated_at)`` index, passing over the recalled ones,
    and the recalled longest unused first off an index of ``memory_uses``: the
    oldest of the two go."""
    allowed = None if most is None else most + sum(scopes.values())
    removed = 0
    for agent, owner in scopes:
        row = conn.execute(
            f"SELECT slot, entries FROM {AGENTS} WHERE agent_id = ?", (scope_key(agent, owner),)
        ).fetchone()
        if row is None or row[1] <= limit:
            continue
        over = row[1] - limit
        if allowed is not None and removed + over > allowed:
            raise LongCap(f"max_entries: {removed + over} entries to delete, over {allowed}")
        with _bounded(conn, most is not None):
            never = conn.execute(_NEVER_USED, (agent, owner, over)).fetchall()
            used = conn.execute(_LEAST_USED, (row[0], over)).fetchall()
        # the longest unused of both, each by its last use or its write: (time, id)
        ids = [i for _, i in heapq.nsmallest(over, [*never, *used])]
        for start in range(0, len(ids), _IDS_PER_DELETE):
            chunk = ids[start : start + _IDS_PER_DELETE]
            marks = ", ".join("?" * len(chunk))
            conn.execute(f"DELETE FROM {FTS} WHERE rowid IN ({marks})", chunk)
            conn.execute(f"DELETE FROM {ENTRIES} WHERE id IN ({marks})", chunk)
        removed += len(ids)
    return removed


@contextmanager
def _bounded(conn: sqlite3.Connection, bounded: bool) -> Iterator[None]:
    """Statements on ``conn`` interrupted, raising :class:`LongCap`, once they run past
    :data:`AT_ONCE_STEPS` (when ``bounded``)."""
    if not bounded:
        yield
        return
    calls = 0

    def spent() -> bool:
        nonlocal calls
        calls += 1
        return calls > AT_ONCE_STEPS

    conn.set_progress_handler(spent, 1000)
    try:
        yield
    except sqlite3.OperationalError as exc:
        if calls > AT_ONCE_STEPS:
            raise LongCap("max_entries: finding the entries to delete takes long") from exc
        raise
    finally:
        conn.set_progress_handler(None, 0)
