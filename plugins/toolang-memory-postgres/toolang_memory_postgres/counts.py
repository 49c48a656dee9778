"""How many live entries a recall's scope holds: bm25's measure of how rare a word is
among them (:func:`.statements.candidates`), counted once and kept a while.

Counting them at each recall read every entry of the scope (an index scan: about 16 ms
a recall at 50,000 entries, whatever the query). The count is a statistic: a few
entries more or less change no ranking. So each plugin object keeps the count of each
scope it recalled from for :data:`COUNT_SECONDS`, adds the entries its own writes
insert, and forgets the counts of a scope a keyed write touched (an upsert may insert
or replace) and every count when entries are deleted (forgotten, pruned, capped).
Other nodes' writes are seen when the count is read again; a count is never taken as
less than the matches a recall found.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final

from toolang_core import PluginDatabase
from toolang_memory_postgres.schema import ENTRIES

COUNT_SECONDS: Final = 60.0
"""How long a scope's count is kept (by the plugin's clock)."""

Scope = tuple[str, str | None, str | None]
"""``(agent, owner, thread)``: ``thread`` ``None`` for every thread."""


class ScopeCounts:
    """The live entries of the scopes recalled from, kept :data:`COUNT_SECONDS`
    (thread-safe)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._kept: dict[Scope, tuple[int, float]] = {}

    def get(self, db: PluginDatabase, scope: Scope, where: str, params: list[object]) -> int:
        """``scope``'s live entries: kept, or counted now with ``where`` (its clause
        and ``params``)."""
        now = self._clock()
        with self._lock:
            kept = self._kept.get(scope)
        if kept is not None and now < kept[1]:
            return kept[0]
        count = int(
            db.execute(f"SELECT count(*) FROM {ENTRIES} WHERE {where}", params).fetchone()[0]
        )
        with self._lock:
            self._kept[scope] = (count, now + COUNT_SECONDS)
        return count

    def inserted(self, agent: str, owner: str | None, thread: str | None, entries: int) -> None:
        """After a commit that inserted ``entries`` entries of ``agent`` and ``owner``
        in ``thread``: added to the counts of the scopes holding them."""
        with self._lock:
            for scope, (count, until) in list(self._kept.items()):
                if scope[:2] == (agent, owner) and scope[2] in (None, thread):
                    self._kept[scope] = (count + entries, until)

    def forget(self, agent: str | None = None, owner: str | None = None) -> None:
        """Count again: the scopes of ``agent`` and ``owner``, or (no agent) every one."""
        with self._lock:
            if agent is None:
                self._kept.clear()
                return
            for scope in [s for s in self._kept if s[:2] == (agent, owner)]:
                del self._kept[scope]
