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

The same object remembers the words a recall counted at more matches than its budget
(:meth:`ScopeCounts.over`, :func:`.statements.candidates`): entries are only added
between deletions, so such a word stays over the budget until entries are deleted
(the same forgetting) or :data:`COUNT_SECONDS` pass (other nodes' deletions).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final

from toolang_core import PluginDatabase
from toolang_memory_postgres.schema import ENTRIES

COUNT_SECONDS: Final = 60.0
"""How long a scope's count, or a word's count over the budget, is kept (by the
plugin's clock)."""
MOST_WORDS: Final = 4096
"""Words over the budget remembered at most (the oldest are forgotten first)."""

Scope = tuple[str, str | None, str | None]
"""``(agent, owner, thread)``: ``thread`` ``None`` for every thread."""


class ScopeCounts:
    """The live entries of the scopes recalled from, kept :data:`COUNT_SECONDS`
    (thread-safe)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._kept: dict[Scope, tuple[int, float]] = {}
        self._over: dict[tuple[Scope, str], float] = {}  # (scope, tsquery) -> until
        self._table: tuple[int, float] | None = None

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

    def table(self, db: PluginDatabase) -> int:
        """The entries of every scope, as PostgreSQL last estimated them (``reltuples``:
        0 before the table was first analyzed), kept :data:`COUNT_SECONDS`."""
        now = self._clock()
        with self._lock:
            kept = self._table
        if kept is not None and now < kept[1]:
            return kept[0]
        row = db.execute(
            f"SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = '{ENTRIES}'::regclass"
        ).fetchone()
        rows = 0 if row is None else int(row[0])
        with self._lock:
            self._table = (rows, now + COUNT_SECONDS)
        return rows

    def inserted(self, agent: str, owner: str | None, thread: str | None, entries: int) -> None:
        """After a commit that inserted ``entries`` entries of ``agent`` and ``owner``
        in ``thread``: added to the counts of the scopes holding them."""
        with self._lock:
            for scope, (count, until) in list(self._kept.items()):
                if scope[:2] == (agent, owner) and scope[2] in (None, thread):
                    self._kept[scope] = (count + entries, until)

    def over(self, scope: Scope, word: str) -> bool:
        """Whether ``word`` (its ``tsquery`` text) was counted at more matches in
        ``scope`` than a recall's budget, less than :data:`COUNT_SECONDS` ago."""
        with self._lock:
            until = self._over.get((scope, word))
        return until is not None and self._clock() < until

    def counted_over(self, scope: Scope, word: str) -> None:
        """``word`` was counted at more matches in ``scope`` than a recall's budget."""
        with self._lock:
            self._over.pop((scope, word), None)  # re-added last: the oldest go first
            self._over[(scope, word)] = self._clock() + COUNT_SECONDS
            if len(self._over) > MOST_WORDS:
                del self._over[next(iter(self._over))]

    def forget(self, agent: str | None = None, owner: str | None = None) -> None:
        """Count again: the scopes of ``agent`` and ``owner``, or (no agent) every
        one, and their words over the budget (an upsert replaces an entry's words)."""
        with self._lock:
            if agent is None:
                self._kept.clear()
                self._over.clear()
                return
            for scope in [s for s in self._kept if s[:2] == (agent, owner)]:
                del self._kept[scope]
            for word in [w for w in self._over if w[0][:2] == (agent, owner)]:
                del self._over[word]
