"""Entries read back as :class:`MemoryItem`: the ranked ones of a recall (each cut to its
share) and the rows a listing selects."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any, Final

from toolang_core.memory import MemoryItem, Provenance
from toolang_memory_sqlite import ranking
from toolang_memory_sqlite.schema import ENTRIES

ITEM_COLUMNS: Final = (
    "id, agent_id, thread_id, turn_id, origin, key, kind, meta, created_at, updated_at, owner, "
    "use_count, last_used_at"
)
LIVE: Final = "(expires_at IS NULL OR expires_at > ?)"


def ranked_items(
    conn: sqlite3.Connection, ranked: Sequence[ranking.Ranked]
) -> tuple[MemoryItem, ...]:
    """The ranked entries as items, in rank order, each cut to its share (one read)."""
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
        body = ranking.clip(row[-1][: r.keep_chars + 1], r.keep_chars)
        items.append(item(row[:-1], body, round(r.score, 6)))
    return tuple(items)


def item(row: Sequence[Any], body: str, score: float) -> MemoryItem:
    """A :class:`MemoryItem` from a row of :data:`ITEM_COLUMNS` and its (maybe clipped) text."""
    row_id, agent, thread, turn, origin, key, kind, meta, created, updated, owner, uses, used = row
    return MemoryItem(
        id=str(row_id),
        text=body,
        score=score,
        key=key,
        kind=kind,
        meta=json.loads(meta) if meta else {},
        use_count=uses,
        last_used_at=used,
        provenance=Provenance(
            agent_id=agent,
            thread_id=thread,
            turn_id=turn,
            origin=origin,
            created_at=created,
            updated_at=updated,
            owner=owner,
        ),
    )
