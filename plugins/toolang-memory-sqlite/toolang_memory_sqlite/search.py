"""Finding recall candidates with bounded work, whatever the query and the memory's size.

Why bounds are needed: FTS5's ``bm25()`` first computes each query term's IDF by
reading the term's *whole* posting list, then scores every row the query matches —
both costs grow with how common the query's words are. A question of common words
("what about the deploy?") over 100,000 entries would read and score tens of
thousands of rows (0.1 to 0.3 s). So a recall plans, with ``B = ranked_matches``:

``bm25``
    the query's words, ORed, match at most ``B`` entries: bm25 ranks them all;
``rare-words``
    otherwise each word's matches are counted (stopping at ``B + 1``) and the rarest
    words are kept while their matches add up to at most ``B``; bm25 ranks the
    entries matching those (common words carry almost no weight in bm25 anyway);
``common-words``
    when even the rarest word matches more than ``B`` entries, bm25 is not used: the
    agent's newest ``B`` entries containing any of the words are ranked by how many
    of the query's words they contain.

A word in at least half of all entries weighs nothing in bm25 (FTS5 floors its IDF
at 10**-6): the entries holding only such words would be taken in by length alone. A
word like that which matches more entries than the recall's candidates is counted as
over the budget, so it is left out like a common word (``rare-words``, or
``common-words`` when no other word matches). Below that many matches it stays: all
its entries fit among the candidates and recency ranks them. (Only words matching at
most ``B`` entries can be weightless and not over the budget already: memories of up
to ``2 B`` entries.)

Counts are over all agents (they bound the IDF reads, which are), ranking is over the
agent's entries only: entry ids are allocated in one range per agent (``slot << 40``
onwards), so a rowid range scopes an FTS5 query at no cost. A thread is narrowed by
the ``scope`` column's thread token.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Callable
from typing import Final, Literal

import attrs

from toolang_memory_sqlite.ranking import Candidate
from toolang_memory_sqlite.schema import AGENTS, ENTRIES, FTS, SEQ_BITS, USES
from toolang_memory_sqlite.text import Term, match_expression

MAX_SLOT: Final = 1 << 22
"""Scopes: 2**22, of 2**SEQ_BITS entries each (ids stay below 2**62)."""
BM25: Final = f"bm25({FTS}, 0.0, 1.0)"
"""bm25 over the body only: the scope tokens weigh nothing."""

Mode = Literal["bm25", "rare-words", "common-words"]


def scope_key(agent_id: str, owner: str | None) -> str:
    """The key of one owner's memory of one agent (``memory_agents.agent_id``; the
    operator's, ``owner=None``, is the agent id alone, as before owners)."""
    return agent_id if owner is None else f"{agent_id}\x1f{owner}"


def thread_token(agent_id: str, thread_id: str) -> str:
    """The token naming one agent's thread in the ``scope`` column."""
    digest = hashlib.blake2b(
        f"{agent_id}\0{thread_id}".encode("utf-8", "surrogatepass"), digest_size=8
    ).digest()
    # A letter then digits: no tokenizer or stemmer changes it.
    return f"t{int.from_bytes(digest):020d}"


def scope_text(agent_id: str, thread_id: str | None) -> str:
    """What an entry's ``scope`` column holds."""
    return "" if thread_id is None else thread_token(agent_id, thread_id)


def allocate_ids(conn: sqlite3.Connection, agent_id: str, count: int) -> range:
    """``count`` new entry ids in ``agent_id``'s range (call inside a write transaction):
    one statement for an agent that has written before. The scope's count of entries
    (``memory_agents.entries``) grows by ``count`` in the same statement: the caller
    takes back those it does not insert (:func:`.writing.write_batch`).

    :raises ValueError: the database holds 4 million agents, or the agent 2**40 entries.
    """
    row = conn.execute(
        f"UPDATE {AGENTS} SET next_seq = next_seq + ?, entries = entries + ? "
        "WHERE agent_id = ? RETURNING slot, next_seq",
        (count, count, agent_id),
    ).fetchone()
    if row is None:
        slot = conn.execute(f"SELECT coalesce(max(slot), 0) + 1 FROM {AGENTS}").fetchone()[0]
        if slot >= MAX_SLOT:
            raise ValueError(f"memory-sqlite holds {MAX_SLOT - 1} agents, its limit")
        conn.execute(
            f"INSERT INTO {AGENTS} (agent_id, slot, next_seq, entries) VALUES (?, ?, ?, ?)",
            (agent_id, slot, 1 + count, count),
        )
        seq = 1
    else:
        slot, seq = row[0], row[1] - count
    if seq + count > 1 << SEQ_BITS:  # the caller's transaction is rolled back
        raise ValueError(f"agent {agent_id!r} has used all 2**{SEQ_BITS} entry ids")
    base = slot << SEQ_BITS
    return range(base + seq, base + seq + count)


@attrs.frozen
class Scope:
    """The rowids of one agent's entries, and the thread token when narrowed to a thread."""

    agent_id: str
    low: int
    high: int
    thread_id: str | None = None
    owner: str | None = None

    @classmethod
    def of(
        cls,
        conn: sqlite3.Connection,
        agent_id: str,
        thread_id: str | None,
        owner: str | None = None,
        slots: dict[str, int] | None = None,
    ) -> Scope | None:
        """The scope of ``owner``'s ``agent_id`` (``None``: it never wrote anything).

        ``slots`` remembers the slots read: an agent's slot, once given, never changes
        (``memory_agents`` rows are never deleted and their slot never updated)."""
        key = scope_key(agent_id, owner)
        slot = None if slots is None else slots.get(key)
        if slot is None:
            row = conn.execute(f"SELECT slot FROM {AGENTS} WHERE agent_id = ?", (key,)).fetchone()
            if row is None:
                return None
            slot = int(row[0])
            if slots is not None:
                slots[key] = slot
        low = slot << SEQ_BITS
        return cls(agent_id, low, low + (1 << SEQ_BITS) - 1, thread_id, owner)

    def expression(self, terms: list[Term]) -> str:
        """MATCH ``terms`` (ORed) in the body, within the thread when narrowed."""
        body = f"body : ({match_expression(terms)})"
        if self.thread_id is None:
            return body
        token = thread_token(scope_key(self.agent_id, self.owner), self.thread_id)
        return f'scope : "{token}" AND {body}'


class CommonWords:
    """Words last counted at more matches than a recall's candidates, with that count.

    Counting a word scans up to ``budget + 1`` of its matches, on every recall with the
    word. But entries are only added between deletions, so a word's count is a lower
    bound until entries are deleted — by this plugin (:meth:`clear`, at every forget and
    prune that deletes) or by another process sharing the file, which is why a count is
    believed for ``keep_seconds`` at most. A word counted over the budget stays over it;
    one counted at half of all entries or more stays weightless while that still holds
    of the count (the entries are read anew each time)."""

    def __init__(
        self,
        keep_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        most: int = 4096,
    ) -> None:
        self._keep = keep_seconds
        self._clock = clock
        self._most = most
        """Words remembered at most (the least recently counted are forgotten first)."""
        self._counted: dict[str, tuple[int, float]] = {}

    def at_least(self, expression: str) -> int:
        """The count last taken of ``expression`` (0: none, or too old to believe)."""
        counted = self._counted.get(expression)
        if counted is None or self._clock() - counted[1] > self._keep:
            return 0
        return counted[0]

    def add(self, expression: str, count: int) -> None:
        counted = self._counted
        counted.pop(expression, None)  # re-added last: the oldest go first
        counted[expression] = (count, self._clock())
        if len(counted) > self._most:
            del counted[next(iter(counted))]

    def clear(self) -> None:
        self._counted.clear()


@attrs.frozen
class Found:
    """What a search found, and how (for the diagnostics)."""

    candidates: list[Candidate]
    mode: Mode
    terms_used: int
    dropped_terms: int = 0


def find(
    conn: sqlite3.Connection,
    scope: Scope,
    terms: list[Term],
    *,
    budget: int,
    now: float,
    limit: int,
    common: CommonWords | None = None,
) -> Found:
    """The ``limit`` best live entries of ``scope`` for ``terms`` (see the module doc);
    ``common`` spares counting words known to be over ``budget`` or weightless."""

    expressions = [f"body : ({match_expression([t])})" for t in terms]
    known = [0 if common is None else common.at_least(e) for e in expressions]
    # One statement counts the words not known to be over the budget (or weightless)
    # and reads the entries of the index; a word whose known count no longer makes it
    # weightless is counted again after it.
    fresh = [n for n, k in enumerate(known) if k <= limit]
    counts, rows = _counts(conn, [expressions[n] for n in fresh], budget)
    each = [budget + 1 if k > budget else k for k in known]
    for n, c in zip(fresh, counts, strict=True):
        each[n] = c
    again = [n for n, k in enumerate(known) if limit < k <= budget and 2 * k < rows]
    if again:
        for n, c in zip(
            again, _counts(conn, [expressions[n] for n in again], budget)[0], strict=True
        ):
            each[n] = c
    if common is not None:
        for n in (*fresh, *again):
            if each[n] > limit:
                common.add(expressions[n], each[n])
    if sum(each) == 0:
        return Found([], "bm25", 0, len(terms))
    # A weightless word counts as over the budget (module doc).
    each = [budget + 1 if limit < n <= budget and 2 * n >= rows else n for n in each]

    def count(chosen: list[Term]) -> int:
        return _counts(conn, [f"body : ({match_expression(chosen)})"], budget)[0][0]

    # Each word's matches first: the ORed query matches at least as many entries as its
    # most common word and at most as many as all of them together, so its own count
    # (as costly as the most common word's) is needed only when those bounds straddle
    # the budget.
    if sum(each) <= budget or (max(each) <= budget and count(terms) <= budget):
        return Found(_by_bm25(conn, scope, terms, now, limit), "bm25", len(terms))
    counted = sorted(((each[n], n, t) for n, t in enumerate(terms)), key=lambda c: c[:2])
    matching = [t for n, _, t in counted if n > 0]
    kept: list[Term] = []
    total = 0
    for n, _, term in counted:
        if n == 0:
            continue
        if total + n > budget:
            break
        kept.append(term)
        total += n
    if kept:
        found = _by_bm25(conn, scope, kept, now, limit)
        return Found(found, "rare-words", len(kept), len(terms) - len(kept))
    found = _by_coverage(conn, scope, matching, budget=budget, now=now, limit=limit)
    return Found(found, "common-words", len(matching), len(terms) - len(matching))


def _by_bm25(
    conn: sqlite3.Connection, scope: Scope, terms: list[Term], now: float, limit: int
) -> list[Candidate]:
    return _live(
        conn,
        scope,
        f"SELECT rowid AS id, {BM25} AS score FROM {FTS} WHERE {FTS} MATCH ? "
        "AND rowid BETWEEN ? AND ? ORDER BY 2 LIMIT ?",
        [scope.expression(terms), scope.low, scope.high, limit],
        now,
    )


_ROWS: Final = f"(SELECT block FROM {FTS}_data WHERE id = 1)"
_COUNT: Final = f"(SELECT count(*) FROM (SELECT 1 FROM {FTS} WHERE {FTS} MATCH ? LIMIT ?))"


def _counts(conn: sqlite3.Connection, expressions: list[str], budget: int) -> tuple[list[int], int]:
    """The matches of each of ``expressions`` (counted up to ``budget + 1``) and the
    entries of the index (:func:`indexed_rows`), in one statement."""
    params: list[object] = []
    for expression in expressions:
        params += [expression, budget + 1]
    row = conn.execute(f"SELECT {', '.join([*[_COUNT] * len(expressions), _ROWS])}", params)
    *counts, block = row.fetchone()
    return [int(c) for c in counts], _varint(block)


def indexed_rows(conn: sqlite3.Connection) -> int:
    """How many entries the full-text index holds (of every agent): the first value of
    FTS5's averages record (row 1 of its ``_data`` table, a varint), which FTS5 keeps
    for bm25; read, not counted."""
    return _varint(conn.execute(f"SELECT {_ROWS}").fetchone()[0])


def _varint(block: bytes | None) -> int:
    """The SQLite varint at the start of ``block`` (0 for none)."""
    block = b"" if block is None else bytes(block)
    value = 0
    for n, byte in enumerate(block[:9]):
        if n == 8:  # SQLite's varint: a ninth byte holds 8 bits
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value
    return value


def _by_coverage(
    conn: sqlite3.Connection,
    scope: Scope,
    terms: list[Term],
    *,
    budget: int,
    now: float,
    limit: int,
) -> list[Candidate]:
    """Rank the newest ``budget`` matches by how many of ``terms`` each contains."""
    if len(terms) == 1:  # each match holds the one word: the newest are the best
        return _live(
            conn,
            scope,
            f"SELECT rowid AS id, -1.0 AS score FROM {FTS} WHERE {FTS} MATCH ? "
            "AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?",
            [scope.expression(terms), scope.low, scope.high, min(limit, budget)],
            now,
        )
    # Each word's newest ``budget`` matches hold every match of the newest ``budget``
    # entries holding any of them (a newer match of the word is a newer match of the
    # query); counted together, the newest ``budget`` of them are those entries, with
    # how many of the words each holds. FTS5 reads each word in rowid order: no sort,
    # and no first pass to find where the newest ``budget`` start.
    newest = " UNION ALL ".join(
        f"SELECT rowid FROM (SELECT rowid FROM {FTS} WHERE {FTS} MATCH ? "
        "AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?)"
        for _ in terms
    )
    params: list[object] = []
    for term in terms:
        params += [scope.expression([term]), scope.low, scope.high, budget]
    # The count as a bm25 value: more negative is better, as FTS5 has it.
    return _live(
        conn,
        scope,
        f"SELECT id, score FROM (SELECT rowid AS id, -1.0 * count(*) AS score FROM ({newest}) "
        "GROUP BY rowid ORDER BY rowid DESC LIMIT ?) ORDER BY 2, 1 DESC LIMIT ?",
        [*params, budget, limit],
        now,
    )


def _live(
    conn: sqlite3.Connection, scope: Scope, ranked: str, params: list[object], now: float
) -> list[Candidate]:
    """The rows of ``ranked`` (a query of ``id, score``) that are live entries of the
    scope, read with their entries in the same statement.

    The agent, owner and thread are checked again on the entries table (ids and tokens
    bound the work; this makes a hash collision harmless). An expired entry not yet
    pruned leaves one candidate fewer. The order does not matter: ranking sorts them all.
    The entry's stored uses come with it (the row is read anyway): no second read for
    them (:mod:`.uses`).
    """
    where = "e.agent_id = ? AND e.owner IS ? AND (e.expires_at IS NULL OR e.expires_at > ?)"
    params = [*params, scope.agent_id, scope.owner, now]
    if scope.thread_id is not None:
        where += " AND e.thread_id = ?"
        params.append(scope.thread_id)
    rows = conn.execute(
        f"SELECT r.id, r.score, e.updated_at, length(e.text), coalesce(u.use_count, 0), "
        f"u.last_used_at FROM ({ranked}) AS r "
        f"JOIN {ENTRIES} AS e ON e.id = r.id LEFT JOIN {USES} AS u ON u.id = r.id WHERE {where}",
        params,
    )
    return rows.fetchall()
