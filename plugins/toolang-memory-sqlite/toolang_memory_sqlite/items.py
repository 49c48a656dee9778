"""Entries read back as :class:`MemoryItem`: the ranked ones of a recall (each cut to its
share) and the rows a listing selects."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, Final

from toolang_core.memory import MemoryItem, Provenance
from toolang_memory_sqlite import ranking, uses
from toolang_memory_sqlite.schema import ENTRIES

ITEM_COLUMNS: Final = (
    "id, agent_id, thread_id, turn_id, origin, key, kind, meta, created_at, updated_at, owner, "
    "use_count, last_used_at"
)
LIVE: Final = "(expires_at IS NULL OR expires_at > ?)"


def ranked_items(
    conn: sqlite3.Connection,
    ranked: Sequence[ranking.Ranked],
    pending: Mapping[int, tuple[int, float]],
) -> tuple[MemoryItem, ...]:
    """The ranked entries as items, in rank order, each cut to its share (one read),
    carrying their stored uses with the ``pending`` ones added (:mod:`.uses`)."""
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
        use = uses.merged((row[-3], row[-2]), pending.get(row[0]))
        items.append(item(row[:-1], body, round(r.score, 6), use))
    return tuple(items)


def item(
    row: Sequence[Any], body: str, score: float, use: tuple[int, float | None] | None = None
) -> MemoryItem:
    """A :class:`MemoryItem` from a row of :data:`ITEM_COLUMNS` and its (maybe clipped)
    text; ``use``, its ``(use_count, last_used_at)`` when not the row's."""
    row_id, agent, thread, turn, origin, key, kind, meta, created, updated, owner, count, used = row
    if use is not None:
        count, used = use
    return MemoryItem(
        id=str(row_id),
        text=body,
        score=score,
        key=key,
        kind=kind,
        meta=json.loads(meta) if meta else {},
        use_count=count,
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
