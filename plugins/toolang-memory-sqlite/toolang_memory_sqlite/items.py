"""Entries read back as :class:`MemoryItem`: the ranked ones of a recall (each cut to its
share); the rows of a listing are read with :data:`ITEM_COLUMNS` too
(:func:`toolang_core.memory.kit.item`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Final

from toolang_core.memory import MemoryItem
from toolang_core.memory.kit import (
    ITEM_COLUMNS,
    Ranked,
    item,
    ranked_items as kit_ranked_items,
    read_chars,
)
from toolang_memory_sqlite.ranking import Candidate
from toolang_memory_sqlite.schema import ITEMS

__all__ = ["ITEM_COLUMNS", "LIVE", "item", "ranked_items"]

LIVE: Final = "(expires_at IS NULL OR expires_at > ?)"


def ranked_items(
    conn: sqlite3.Connection,
    ranked: Sequence[Ranked[Candidate]],
    pending: Mapping[int, tuple[int, float]],
) -> tuple[MemoryItem, ...]:
    """The ranked entries as items (:func:`toolang_core.memory.kit.ranked_items`), in
    one read; each carries its uses, the ``pending`` ones added."""
    if not ranked:
        return ()
    marks = ", ".join("?" * len(ranked))
    rows = conn.execute(
        f"SELECT {ITEM_COLUMNS}, substr(text, 1, ?) FROM {ITEMS} WHERE id IN ({marks})",
        (read_chars(ranked), *(r.candidate[0] for r in ranked)),
    )
    return kit_ranked_items(ranked, rows, pending)
