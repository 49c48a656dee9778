"""Use counts: how often and how lately each entry was recalled, and what that is worth.

A recall must not commit (it is on every turn's path), so the uses it counts are held
in memory, :class:`PendingUses`, and written behind by the plugin: by its next write's
transaction or, once enough entries are waiting, in a transaction of their own that the
recall reaching the bound starts (or hands to the plugin's database thread).
What a crash loses is at most those pending counts: a ranking hint, not a record.

``usage`` is what uses add to a recall's ranking:

``usage = min(1, log2(2 + use_count - use_threshold) / log2(2 + use_saturation -
use_threshold)) * 0.5 ** (days since last use / recency_half_life_days)``

0 below ``use_threshold`` uses (every recall returns several entries, most of them not
what was asked, so one or two uses are noise — on ``bench/memory_quality.py`` counting
them made recall@5 worse), and up to 1 (recalled ``use_saturation`` times, just now),
blended in by :func:`~toolang_core.memory.kit.blend` as ``score = (1 - use_weight) *
blended + use_weight * relevance * usage``: with a ``use_weight`` of at most 0.5 uses
break near-ties between comparable matches and never lift a poor match over a clearly
better one.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress

import attrs

from toolang_core.memory.kit.ranking import DAY
from toolang_core.memory.types import MemoryItem

Use = tuple[int, float | None]
"""An entry's ``(use_count, last_used_at)``."""


class PendingUses:
    """Uses counted since the last commit, by entry id (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._uses: dict[int, tuple[int, float]] = {}

    def __len__(self) -> int:
        return len(self._uses)

    def add(self, ids: Iterable[int], now: float) -> dict[int, tuple[int, float]]:
        """One use of each of ``ids`` at ``now``; their pending uses, this one included."""
        with self._lock:
            added = self._one_more(ids, now)
            self._uses.update(added)
        return added

    def preview(self, ids: Iterable[int], now: float) -> dict[int, tuple[int, float]]:
        """What :meth:`add` would return, adding nothing: for a recall that reads its
        items (with this use) before it counts their uses, so that one that fails
        midway counts none."""
        with self._lock:
            return self._one_more(ids, now)

    def _one_more(self, ids: Iterable[int], now: float) -> dict[int, tuple[int, float]]:
        """Each of ``ids`` with its pending uses and one more at ``now`` (lock held)."""
        more: dict[int, tuple[int, float]] = {}
        for id_ in ids:  # (an id given twice: two uses)
            count, _ = more.get(id_) or self._uses.get(id_, (0, now))
            more[id_] = (count + 1, now)
        return more

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

    def write_last(
        self,
        write: Callable[[Mapping[int, tuple[int, float]]], None],
        errors: tuple[type[BaseException], ...],
    ) -> None:
        """At close: every pending use handed to ``write`` (it commits them), when there
        are any; one of ``errors`` drops them — a ranking hint, not a record: the entries
        themselves are committed."""
        taken = self.take()
        if taken:
            with suppress(*errors):
                write(taken)

    @contextmanager
    def taken(self) -> Iterator[dict[int, tuple[int, float]]]:
        """``with pending.taken() as taken: …`` around the transaction that writes them:
        every pending use (:meth:`take`), put back (:meth:`restore`) when the block
        raises."""
        taken = self.take()
        try:
            yield taken
        except BaseException:
            self.restore(taken)
            raise


def merged(stored_use: Use, pending: tuple[int, float] | None) -> Use:
    """A stored use with the pending ones added."""
    if pending is None:
        return stored_use
    count, last = stored_use
    return count + pending[0], pending[1] if last is None else max(last, pending[1])


def usages(
    stored: Iterable[tuple[int, int, float | None]],
    pending: Mapping[int, tuple[int, float]],
    *,
    now: float,
    threshold: int,
    saturation: int,
    half_life_days: float,
) -> dict[int, float] | None:
    """What each candidate's uses — ``stored``, its ``(id, use_count, last_used_at)``,
    with its ``pending`` ones added — are worth in ranking, 0 … 1 (``usage`` in the
    module docstring; 0 left out); ``None`` when no candidate was ever recalled: then
    uses do not touch the ranking at all (:func:`~toolang_core.memory.kit.blend`).

    A recall ranks up to ``candidates`` of them, most recalled before on a busy
    memory: the formula's constant parts are worked out once, not per candidate."""
    top = max(saturation, threshold)
    scale = math.log2(2 + top - threshold)
    ever = False
    worth: dict[int, float] = {}
    for id_, stored_count, stored_last in stored:
        count, last = stored_count, stored_last if stored_count > 0 else None
        waiting = pending.get(id_)
        if waiting is not None:
            count, last = merged((count, last), waiting)
        if count <= 0:
            continue
        ever = True
        if count < threshold or last is None:
            continue
        # min(1, log2(…) / scale) is exactly 1 from ``top`` uses on
        frequency = 1.0 if count >= top else min(1.0, math.log2(2 + count - threshold) / scale)
        idle = max(0.0, now - last) / DAY
        worth[id_] = float(frequency * 0.5 ** (idle / half_life_days))
    return worth if ever else None


def with_uses(items: Sequence[MemoryItem], uses: Mapping[int, Use]) -> tuple[MemoryItem, ...]:
    """``items`` carrying their uses (an item without any keeps what it has)."""
    return tuple(
        attrs.evolve(item, use_count=use[0], last_used_at=use[1])
        if (use := uses.get(int(item.id))) is not None
        else item
        for item in items
    )


def with_pending(
    items: Sequence[MemoryItem], pending: Mapping[int, tuple[int, float]]
) -> tuple[MemoryItem, ...]:
    """``items`` (read with their stored uses) carrying their ``pending`` uses too."""
    return with_uses(
        items,
        {
            int(i.id): merged((i.use_count, i.last_used_at), pending[int(i.id)])
            for i in items
            if int(i.id) in pending
        },
    )
