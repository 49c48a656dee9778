"""Use counts: how often and how lately each entry was recalled, and what that is worth
(memory-sqlite's rules and settings, kept here because plugins never import each other).

A recall must not commit (it is on every turn's path), so the uses it counts are held
in memory, :class:`PendingUses` (per plugin object: each node counts its own), and
written behind: by the next write's transaction (a turn's memory write, ``forget``,
pruning — one batched ``UPDATE … FROM unnest(…)`` in that same commit) or, once
:attr:`~.settings.MemoryPostgresSettings.pending_uses` entries are waiting, by the recall
that reaches the bound, in a transaction of its own. ``health`` and ``close`` write them
too. What a crash loses is at most those pending counts: a ranking hint, not a record.
Counts from several nodes add up (each adds its own to the stored count).

``usage`` is what uses add to a recall's ranking:

``usage = min(1, log2(2 + use_count - use_threshold) / log2(2 + use_saturation -
use_threshold)) * 0.5 ** (days since last use / recency_half_life_days)``

0 below ``use_threshold`` uses (every recall returns several entries, most of them not
what was asked, so one or two uses are noise), up to 1 (recalled ``use_saturation``
times, just now), blended in as ``score = (1 - use_weight) * blended + use_weight *
relevance * usage``: uses move an entry by at most ``use_weight`` (0.05 by default, at
most 0.5), so they break near-ties between comparable matches and never lift a poor
match over a clearly better one.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from toolang_core import PluginDatabase
from toolang_core.memory import MemoryItem
from toolang_memory_postgres.ranking import DAY, Candidate
from toolang_memory_postgres.schema import ENTRIES
from toolang_memory_postgres.statements import SCOPE

Use = tuple[int, float | None]
"""An entry's ``(use_count, last_used_at)``."""

_LOCK: Final = f"SELECT id FROM {ENTRIES} WHERE id = ANY(?) ORDER BY id FOR UPDATE"
"""The rows about to be counted, locked in id order (two nodes flushing at once wait
for each other instead of deadlocking)."""
_FLUSH: Final = (
    f"UPDATE {ENTRIES} AS e SET use_count = e.use_count + u.n, "
    "last_used_at = greatest(e.last_used_at, u.at) "
    "FROM unnest(?::bigint[], ?::bigint[], ?::double precision[]) AS u(id, n, at) "
    "WHERE e.id = u.id"
)


class PendingUses:
    """Uses counted since the last commit, by entry id (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._uses: dict[int, tuple[int, float]] = {}

    def __len__(self) -> int:
        return len(self._uses)

    def add(self, ids: Iterable[int], now: float) -> None:
        """One use of each of ``ids`` at ``now``."""
        with self._lock:
            for id_ in ids:
                count, _ = self._uses.get(id_, (0, now))
                self._uses[id_] = (count + 1, now)

    def get(self, ids: Iterable[int]) -> dict[int, tuple[int, float]]:
        """The pending uses of those of ``ids`` that have some."""
        with self._lock:
            return {i: self._uses[i] for i in ids if i in self._uses}

    def take(self) -> dict[int, tuple[int, float]]:
        """Every pending use, leaving none (give them back with :meth:`restore` when
        their transaction fails)."""
        with self._lock:
            taken, self._uses = self._uses, {}
        return taken

    def restore(self, taken: Mapping[int, tuple[int, float]]) -> None:
        """Put back uses :meth:`take` gave whose commit failed (added to newer ones)."""
        with self._lock:
            for id_, (count, at) in taken.items():
                newer, last = self._uses.get(id_, (0, at))
                self._uses[id_] = (count + newer, max(at, last))


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


def merged(stored_use: Use, pending: tuple[int, float] | None) -> Use:
    """A stored use with the pending ones added."""
    if pending is None:
        return stored_use
    count, last = stored_use
    return count + pending[0], pending[1] if last is None else max(last, pending[1])


def usage(use: Use, *, now: float, threshold: int, saturation: int, half_life_days: float) -> float:
    """What ``use`` is worth in ranking: 0 … 1 (formula in the module docstring)."""
    count, last = use
    if count < threshold or last is None:
        return 0.0
    top = max(saturation, threshold)
    frequency = min(1.0, math.log2(2 + count - threshold) / math.log2(2 + top - threshold))
    idle = max(0.0, now - last) / DAY
    return float(frequency * 0.5 ** (idle / half_life_days))


def boost(
    scored: list[tuple[float, Candidate]],
    uses: Mapping[int, Use],
    *,
    now: float,
    weight: float,
    threshold: int,
    saturation: int,
    half_life_days: float,
) -> list[tuple[float, Candidate]]:
    """``scored`` (best first) re-scored with uses, best first; equal scores keep
    their order. Unchanged when no candidate was ever recalled or ``weight`` is 0."""
    if not uses or weight <= 0.0:
        return scored
    keep = 1.0 - weight
    best = -min(c[1] for _, c in scored)
    rescored = [
        (
            keep * score
            + weight
            * ((-c[1] / best) if best > 0 else 1.0)
            * usage(
                uses.get(c[0], (0, None)),
                now=now,
                threshold=threshold,
                saturation=saturation,
                half_life_days=half_life_days,
            ),
            n,
            c,
        )
        for n, (score, c) in enumerate(scored)
    ]
    rescored.sort(key=lambda r: (-r[0], r[1]))
    return [(score, c) for score, _, c in rescored]


def with_uses(items: Sequence[MemoryItem], uses: Mapping[int, Use]) -> tuple[MemoryItem, ...]:
    """``items`` carrying their uses (an item without any keeps what it has)."""
    return tuple(
        attrs.evolve(item, use_count=use[0], last_used_at=use[1])
        if (use := uses.get(int(item.id))) is not None
        else item
        for item in items
    )


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
