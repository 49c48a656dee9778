"""Entries read back as :class:`MemoryItem`: the ranked ones of a recall (each cut to its
share); the rows of a listing are read with :data:`ITEM_COLUMNS` too
(:func:`toolang_core.memory.kit.item`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Final

from toolang_core.memory import MemoryItem
from toolang_core.memory.kit import ITEM_COLUMNS, Ranked, clip, item, merged
from toolang_memory_sqlite.ranking import Candidate
from toolang_memory_sqlite.schema import ENTRIES

__all__ = ["ITEM_COLUMNS", "LIVE", "item", "ranked_items"]

LIVE: Final = "(expires_at IS NULL OR expires_at > ?)"


def ranked_items(
    conn: sqlite3.Connection,
    ranked: Sequence[Ranked[Candidate]],
    pending: Mapping[int, tuple[int, float]],
) -> tuple[MemoryItem, ...]:
    """The ranked entries as items, in rank order, each cut to its share (one read),
    carrying their stored uses with the ``pending`` ones added."""
    if not ranked:
        return ()
    longest = max(r.keep_chars for r in ranked) + 1  # one more: clip() sees the cut
    rows = {
        row[0]: row
        for row in conn.execute(
            f"SELECT {ITEM_COLUMNS}, substr(text, 1, ?) FROM {ENTRIES} "
            f"WHERE id IN ({', '.join('?' * len(ranked))})",
            (longest, *(r.candidate[0] for r in ranked)),
        )
    }
    items = []
    for r in ranked:
        row = rows[r.candidate[0]]
        body = clip(row[-1][: r.keep_chars + 1], r.keep_chars)
        use = merged((row[-3], row[-2]), pending.get(row[0]))
        items.append(item(row[:-1], body, round(r.score, 6), use))
    return tuple(items)
