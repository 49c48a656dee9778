"""The ``sqlite`` memory plugin: entries in SQLite, recalled with FTS5 and recency.

Every method but ``recall`` and ``remember`` is synchronous and thread-safe (the runtime
runs them in worker threads); those two are ``async``: the calls of concurrent turns
are done together, at once in the event loop's thread or, when they would wait, in
the plugin's own database thread (:mod:`.group`), ``remember`` writing their batches
in one transaction; ``recall_now`` and ``remember_now`` are their synchronous forms. A
database failure is remembered for :meth:`SQLiteMemory.health` and raised as
:class:`SQLiteMemoryError` naming the operation and the file; a batch the plugin
refuses (too long, bad TTL, meta that is not JSON) raises ``ValueError`` and stores
nothing.

This class keeps the contract and its thread and grouping; the statements are in
:mod:`.writing` (checks, inserts, upserts, pruning), :mod:`.items` (rows read back as
items), :mod:`.forgetting` and :mod:`.search`; failures are turned into errors in
:mod:`.errors`.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import cast

from toolang_core import hide_from_tools
from toolang_core.memory import (
    MemoryEntry,
    MemoryForget,
    MemoryForgetResult,
    MemoryHealth,
    MemoryItem,
    MemoryLimits,
    MemoryListRequest,
    MemoryRecallRequest,
    MemoryRecallResult,
    MemoryWriteBatch,
    MemoryWriteResult,
    kit,
)
from toolang_memory_sqlite import search, uses, writing
from toolang_memory_sqlite.at_once import AT_ONCE_DELETES, Locked, writes_at_once
from toolang_memory_sqlite.database import Connections, MemoryClosed, WriteBusy, busy
from toolang_memory_sqlite.dbthread import DatabaseThread
from toolang_memory_sqlite.errors import SQLiteMemoryError, failures
from toolang_memory_sqlite.forgetting import forget_filters
from toolang_memory_sqlite.group import LEFT, GroupCalls, Left
from toolang_memory_sqlite.items import LIVE, ranked_items
from toolang_memory_sqlite.ranking import Candidate
from toolang_memory_sqlite.schema import ENTRIES, FTS, ITEMS, size_bytes
from toolang_memory_sqlite.settings import NAME, PROVIDER, MemorySQLiteSettings

__all__ = ["SQLiteMemory", "SQLiteMemoryError"]


Call = MemoryRecallRequest | tuple[MemoryWriteBatch, list[kit.Row]]
"""What the runtime hands the database thread: a recall, or a batch to write."""


class SQLiteMemory:
    """Entries of every agent in one SQLite file (its own, or the execution store's)."""

    def __init__(
        self,
        path: Path,
        settings: MemorySQLiteSettings | None = None,
        *,
        shared_with_store: bool = False,
        synchronous: str = "normal",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        # Every owner's exchanges: hidden from tools' programs from now on, though the
        # file is opened only on the first recall or write.
        hide_from_tools(path, f"{path}-wal", f"{path}-shm")
        self.settings = settings or MemorySQLiteSettings()
        self.shared_with_store = shared_with_store
        self._clock = clock
        self._db = Connections(
            path,
            busy_timeout=self.settings.busy_timeout_seconds,
            synchronous=synchronous,
            checkpoints=not shared_with_store,
        )
        self._last_error = failures(path, clock)
        self._guard = self._last_error.guard
        self._thread: DatabaseThread | None = None
        self._thread_lock = threading.Lock()
        self._calls: GroupCalls[Call, MemoryRecallResult | MemoryWriteResult] = GroupCalls(
            self._group, self._own_thread, at_once=self._at_once
        )
        self._common = search.CommonWords()
        self._slots: dict[str, int] = {}  # scope key -> slot (search.Scope.of)
        self._uses = kit.PendingUses()  # written behind (see .uses)
        self._flush_posted = False  # a commit of them is handed to the database thread
        self._closed = False

    # -- the contract ---------------------------------------------------------------------

    def _own_thread(self) -> DatabaseThread:
        """The plugin's database thread: the runtime's recalls and writes, on the
        connection they share (:meth:`.database.Connections.main`)."""
        with self._thread_lock:
            if self._closed:  # a call after close fails; it starts no thread nobody stops
                raise MemoryClosed(f"memory-sqlite on {self.path} is closed")
            if self._thread is None:
                self._thread = DatabaseThread(NAME)
                # a plugin dropped without close() ends its thread too
                weakref.finalize(self, self._thread.shutdown, False)
            return self._thread

    async def recall(self, request: MemoryRecallRequest) -> MemoryRecallResult:
        """:meth:`recall_now`, with the recalls and writes handed in in the same round
        of the event loop: done at once in the loop's thread (:meth:`_at_once`), or in
        the plugin's database thread when that would wait (:meth:`_own_thread`,
        :mod:`.group`)."""
        return cast(MemoryRecallResult, await self._calls.add(request))

    def _group(
        self, calls: Sequence[Call]
    ) -> list[MemoryRecallResult | MemoryWriteResult | Exception]:
        """The recalls and writes of concurrent turns, handed to the database thread
        together (one hop there and one wake-up of the event loop back for both): the
        recalls first (their turns wait to start), then the writes in one transaction."""
        recalls = [c for c in calls if isinstance(c, MemoryRecallRequest)]
        writes = [c for c in calls if not isinstance(c, MemoryRecallRequest)]
        with self._db.main_lock:
            try:
                conn = self._main("remember" if writes else "recall")
            except Exception as exc:  # e.g. closed: every call fails
                return [exc] * len(calls)
            recalled = iter(self._recall_group(recalls, conn))
            written: Iterator[MemoryWriteResult | Exception] = iter(())
            if writes:
                try:
                    written = iter(self._write_group(writes, conn))
                except Exception as exc:  # e.g. the file locked: the writes fail, not the recalls
                    written = iter([exc] * len(writes))
        return [next(recalled if isinstance(c, MemoryRecallRequest) else written) for c in calls]

    def _at_once(
        self, calls: Sequence[Call]
    ) -> list[MemoryRecallResult | MemoryWriteResult | Exception | Left]:
        """The recalls and writes of ``calls`` done at once in the event loop's thread,
        on the connection the database thread uses (:mod:`.group`), as :meth:`_group`
        does them; :data:`~.group.LEFT` for those left to that thread, which may wait:
        everything until that connection is open (opening may wait for another
        process's write) and while the thread holds it (it serves another event loop),
        a recall that finds the file locked (another process recovering it after a
        crash), and writes that would wait: for another write, for the disk at each
        commit (``synchronous = "full"``), or for as much work as more than
        :data:`.at_once.AT_ONCE_CHARS` of text or a cap deleting more than
        :data:`.at_once.AT_ONCE_DELETES` entries (``max_entries``) may take.

        A recall's work is bounded (``ranked_matches``) and a WAL reader never waits,
        so neither blocks the loop for long; the connection's busy timeout is off for
        them (:meth:`.database.Connections.main`)."""
        outcomes: list[MemoryRecallResult | MemoryWriteResult | Exception | Left]
        outcomes = [LEFT] * len(calls)
        if not self._db.main_lock.acquire(blocking=False):
            return outcomes
        try:
            if not self._db.main_opened:
                return outcomes
            recalls = [n for n, c in enumerate(calls) if isinstance(c, MemoryRecallRequest)]
            writes = [(n, c) for n, c in enumerate(calls) if not isinstance(c, MemoryRecallRequest)]
            try:
                conn = self._main("remember" if writes else "recall", waits=False)
            except SQLiteMemoryError as exc:
                return [exc] * len(calls)
            except MemoryClosed:
                return outcomes  # the thread says so
            asked = [cast(MemoryRecallRequest, calls[n]) for n in recalls]
            for n, recalled in zip(
                recalls, self._recall_group(asked, conn, at_once=True), strict=True
            ):
                if not isinstance(recalled, Locked):
                    outcomes[n] = recalled
            if writes and writes_at_once(
                self._db.commits_wait_for_disk, [rows for _, (_, rows) in writes]
            ):
                try:
                    written = self._write_group([c for _, c in writes], conn, wait=False)
                except (WriteBusy, MemoryClosed):
                    return outcomes
                except Exception as exc:  # e.g. the file damaged: the writes fail
                    written = [exc] * len(writes)
                for (n, _), outcome in zip(writes, written, strict=True):
                    outcomes[n] = outcome
            return outcomes
        finally:
            self._db.main_lock.release()

    def _main(self, operation: str, *, waits: bool = True) -> sqlite3.Connection:
        """The connection of the runtime's calls (the caller holds its lock)."""
        with self._guard(operation):
            return self._db.main(waits=waits)

    def _recall_group(
        self,
        requests: Sequence[MemoryRecallRequest],
        conn: sqlite3.Connection,
        *,
        at_once: bool = False,
    ) -> list[MemoryRecallResult | Exception]:
        """:meth:`recall_now` for each of ``requests`` on ``conn``: its result or its
        exception (``at_once``: :class:`Locked` for one that found the file locked)."""
        outcomes: list[MemoryRecallResult | Exception] = []
        for request in requests:
            try:
                outcomes.append(self._recall(request, conn, at_once=at_once))
            except Exception as exc:
                outcomes.append(exc)
        self._flush_if_full()
        return outcomes

    def _flush_if_full(self) -> None:
        """Once :attr:`pending_uses` entries wait (the bound of the write-behind), hand
        their commit to the database thread, after the calls handed to it before: the
        recall of the runtime's that reached the bound does not wait for it, nor does
        the event loop's thread when that recall ran there (:meth:`_at_once`)."""
        if len(self._uses) < self.settings.pending_uses or self._flush_posted:
            return
        self._flush_posted = True  # (two posted at once: the second finds nothing to do)
        try:
            self._own_thread().post(self._flush_pending)
        except (MemoryClosed, RuntimeError):  # closed: close() commits them
            self._flush_posted = False

    def _flush_pending(self) -> None:
        """In the database thread: commit the pending uses, unless a write took them
        along meanwhile. It does not wait for another write (of this process or another
        one): the recalls behind it would wait too; the uses stay pending, and the next
        recall past the bound hands their commit over again."""
        self._flush_posted = False
        with self._db.main_lock:
            if len(self._uses) < self.settings.pending_uses:
                return
            taken: Mapping[int, tuple[int, float]] = {}
            try:
                with (
                    self._guard("recall"),
                    self._db.write(self._db.main(waits=False), wait=False) as conn,
                ):
                    # taken once the write is under way: until then they stay pending
                    # (counted by listings and ranking), and back there if it fails
                    taken = self._uses.take()
                    uses.flush(conn, taken)
            except (WriteBusy, MemoryClosed, SQLiteMemoryError):
                self._uses.restore(taken)

    def recall_now(self, request: MemoryRecallRequest) -> MemoryRecallResult:
        """The agent's entries that best match ``request.query_text``: candidates found
        with bounded work (``search``), ranked with their uses and limited
        (:func:`toolang_core.memory.kit.rank`), the uses of those returned counted
        (committed later, :mod:`.uses`)."""
        result = self._recall(request, None)
        self._flush_if_full()
        return result

    def _recall(
        self,
        request: MemoryRecallRequest,
        conn: sqlite3.Connection | None,
        *,
        at_once: bool = False,
    ) -> MemoryRecallResult:
        """:meth:`recall_now` on ``conn`` (default: this thread's connection).

        ``at_once`` (in the event loop's thread, :meth:`_at_once`): a recall that finds
        the file locked raises :class:`Locked`, which is no failure (health does not
        hear of it: the database thread does the recall again, and waits); the uses of
        the items are counted only once the recall has succeeded."""
        recalling = kit.Recalling.of(request, self.settings.max_query_terms)
        ranked: list[kit.Ranked[Candidate]] = []
        items: tuple[MemoryItem, ...] = ()
        with self._guard("recall"):
            conn = self._db.get() if conn is None else conn
            try:
                scope = search.Scope.of(
                    conn, request.agent_id, request.thread_id, request.owner, self._slots
                )
                if recalling.terms and scope is not None:
                    ranked, items = self._ranked(conn, scope, recalling, request.limits)
            except sqlite3.OperationalError as exc:
                if at_once and busy(exc):
                    raise Locked(f"memory-sqlite: {self.path} is locked") from exc
                raise
        return recalling.result(PROVIDER, items, ranked)

    def _ranked(
        self,
        conn: sqlite3.Connection,
        scope: search.Scope,
        recalling: kit.Recalling,
        limits: MemoryLimits,
    ) -> tuple[list[kit.Ranked[Candidate]], tuple[MemoryItem, ...]]:
        """The candidates of ``recalling``'s terms in ``scope`` ranked and limited, and
        the items of those returned, which carry one use more: counted (pending) once
        they are read, so a recall that fails counts none."""
        now = self._clock()
        found = search.find(
            conn,
            scope,
            recalling.terms,
            budget=self.settings.ranked_matches,
            now=now,
            limit=self.settings.candidates,
            common=self._common,
        )
        usages = self._usages(found.candidates, now)
        ranked = kit.rank(found.candidates, limits, self.settings, now=now, usages=usages)
        ids = [r.candidate[0] for r in ranked]
        items = ranked_items(conn, ranked, self._uses.preview(ids, now))
        self._uses.add(ids, now)
        recalling.diagnostics.update(
            mode=found.mode, candidates=len(found.candidates), dropped_terms=found.dropped_terms
        )
        return ranked, items

    async def remember(self, batch: MemoryWriteBatch) -> MemoryWriteResult:
        """Store ``batch``: all of it or, on any error, nothing. Batches handed in in the
        same round of the event loop, or while another write is under way, are written
        together, in one transaction (a savepoint each: one that fails leaves the
        others), at once or in the database thread (:meth:`recall`); each call returns
        once its batch is committed."""
        return cast(MemoryWriteResult, await self._calls.add((batch, self._rows(batch))))

    def remember_now(self, batch: MemoryWriteBatch) -> MemoryWriteResult:
        """:meth:`remember`, synchronously in the calling thread, in a transaction of
        its own (for scripts and benchmarks that call the plugin directly)."""
        rows = self._rows(batch)
        now = self._clock()
        taken = self._uses.take()
        try:
            with self._guard("remember"), self._db.write() as conn:
                uses.flush(conn, taken)
                pruned = writing.prune(conn, now, self.settings.prune_batch)
                writing.write_batch(conn, batch, rows, now)
                pruned += self._cap(conn, [(batch, rows)])
        except BaseException:
            self._uses.restore(taken)
            raise
        self._deleted(pruned)
        return writing.written(rows, pruned)

    def _rows(self, batch: MemoryWriteBatch) -> list[kit.Row]:
        """The entries of ``batch`` checked (:func:`toolang_core.memory.kit.checked`),
        before anything is written; ``ValueError`` for the first that cannot be stored,
        or for an agent id holding U+001F: it separates the agent from the owner in a
        scope's key (:func:`.search.scope_key`), and such an agent would share another
        agent and owner's range of ids and count of entries (the runtime never makes
        one: its agent names are letters, digits, ``_`` and ``-``)."""
        if "\x1f" in batch.agent_id:
            message = (
                f"{NAME}: agent id {batch.agent_id!r} holds U+001F, which the plugin keeps "
                "between an agent and its owner; nothing of this batch was stored"
            )
            self._last_error.record(message)
            raise ValueError(message)
        return [self._checked(batch, n, entry) for n, entry in enumerate(batch.entries)]

    def _checked(self, batch: MemoryWriteBatch, n: int, entry: MemoryEntry) -> kit.Row:
        """Entry ``n`` of ``batch`` checked alone (:func:`toolang_core.memory.kit.checked`)."""
        return kit.checked(
            batch, n, entry, max_chars=self.settings.max_entry_chars, failures=self._last_error
        )

    def _write_group(
        self,
        group: Sequence[tuple[MemoryWriteBatch, list[kit.Row]]],
        conn: sqlite3.Connection | None = None,
        *,
        wait: bool = True,
    ) -> list[MemoryWriteResult | Exception]:
        """Write the batches of ``group`` in one transaction on ``conn`` (default: this
        thread's connection): all together in a few statements when none has a key
        (:func:`.writing.insert_group`), else (or when that fails) each in a savepoint,
        one that fails leaving the others. :raises WriteBusy: with ``wait=False``."""
        now = self._clock()
        taken = self._uses.take()  # the turn's write commits the uses its recall counted
        try:
            with self._guard("remember"), self._db.write(conn, wait=wait) as writing_conn:
                uses.flush(writing_conn, taken)
                pruned = writing.prune(writing_conn, now, self.settings.prune_batch)
                if writing.insert_group(writing_conn, group, now, self._guard):
                    outcomes: list[MemoryWriteResult | Exception] = [
                        writing.written(rows, pruned if n == 0 else 0)
                        for n, (_, rows) in enumerate(group)
                    ]
                else:
                    outcomes = writing.each_batch(writing_conn, group, now, pruned, self._guard)
                # done at once (not to wait): a cap may delete only a few entries there
                most = None if wait else AT_ONCE_DELETES
                pruned += self._cap(writing_conn, group, most)
        except (ValueError, SQLiteMemoryError) as exc:
            self._uses.restore(taken)
            if len(group) != 1:
                raise
            return [exc]  # a lone batch inserted without a savepoint: rolled back whole
        except BaseException:
            self._uses.restore(taken)
            raise
        self._deleted(pruned)
        return outcomes

    def forget(self, request: MemoryForget) -> MemoryForgetResult:
        """Delete the agent's entries named by key, or matching the filter."""
        forgotten = 0
        with self._guard("forget"), self._db.write() as conn:
            for where, params in forget_filters(request):
                conn.execute(
                    f"DELETE FROM {FTS} WHERE rowid IN (SELECT id FROM {ENTRIES} WHERE {where})",
                    params,
                )
                forgotten += conn.execute(f"DELETE FROM {ENTRIES} WHERE {where}", params).rowcount
        self._deleted(forgotten)
        return MemoryForgetResult(forgotten=forgotten, provider=PROVIDER)

    def list_entries(self, request: MemoryListRequest) -> tuple[MemoryItem, ...]:
        """The agent's live entries (of one thread, when given), newest write first."""
        scope = ("agent_id = ? AND owner IS ?", [request.agent_id, request.owner])
        sql, params = kit.list_statement(request, ITEMS, scope, LIVE, self._clock())
        with self._guard("list_entries"):
            return kit.listed(self._db.get().execute(sql, params), self._uses)

    def health(self) -> MemoryHealth:
        """Entries and size after pruning what expired (a prune that fails, e.g. for a
        long write elsewhere, is kept as the last error); ``down`` when the file fails."""
        return kit.health_after_pruning(
            self._last_error,
            PROVIDER,
            prune=self.prune,
            measure=self._measure,
            closed=(MemoryClosed,),
        )

    def _measure(self) -> tuple[str, int, int | None]:
        """What ``health`` says: where the entries are, how many, their size in bytes."""
        conn = self._db.get()
        entries = int(conn.execute(f"SELECT count(*) FROM {ENTRIES}").fetchone()[0])
        where = "in the execution store's file " if self.shared_with_store else ""
        detail = f"{entries} entries {where}at {self.path}"
        return detail, entries, size_bytes(conn, self.shared_with_store)

    def prune(self) -> int:
        """Delete every expired entry (in batches of ``prune_batch``); return how many."""
        return kit.prune_all(self._prune_batch, self.settings.prune_batch)

    def _prune_batch(self) -> int:
        """Delete up to ``prune_batch`` expired entries in a transaction that writes the
        pending uses too (so health() commits them); return how many."""
        with self._uses.taken() as taken, self._guard("prune"), self._db.write() as conn:
            uses.flush(conn, taken)
            removed = writing.prune(conn, self._clock(), self.settings.prune_batch)
        self._deleted(removed)
        return removed

    def close(self) -> None:
        """Commit the pending uses (best effort), then close the database connections
        (of every thread)."""
        with self._thread_lock:
            self._closed = True  # no commit of the uses is handed to the thread any more
        self._uses.write_last(self._write_last, (SQLiteMemoryError, MemoryClosed))
        self._db.close()
        with self._thread_lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.shutdown(wait=False)

    # -- helpers --------------------------------------------------------------------------

    def _write_last(self, taken: Mapping[int, tuple[int, float]]) -> None:
        with self._guard("close"), self._db.write() as conn:
            uses.flush(conn, taken)

    def _usages(self, candidates: Sequence[Candidate], now: float) -> dict[int, float] | None:
        """What the candidates' uses, stored (read with them) and pending, add to their
        ranking (:func:`toolang_core.memory.kit.usages`); ``None`` when uses do not count."""
        if self.settings.use_weight <= 0.0 or not candidates:
            return None
        return kit.usages(
            ((c[0], c[4], c[5]) for c in candidates),
            self._uses.get(c[0] for c in candidates),
            now=now,
            threshold=self.settings.use_threshold,
            saturation=self.settings.use_saturation,
            half_life_days=self.settings.recency_half_life_days,
        )

    def _cap(
        self,
        conn: sqlite3.Connection,
        batches: Sequence[tuple[MemoryWriteBatch, list[kit.Row]]],
        most: int | None = None,
    ) -> int:
        """Deleted past ``max_entries`` in the scopes ``batches`` wrote to (:func:`.uses.cap`;
        :class:`.uses.LongCap` past ``most`` beside the entries written)."""
        limit = self.settings.max_entries
        if limit is None:
            return 0
        written: dict[tuple[str, str | None], int] = {}
        for batch, rows in batches:
            scope = (batch.agent_id, batch.owner)
            written[scope] = written.get(scope, 0) + len(rows)
        return uses.cap(conn, written, limit, most=most)

    def _deleted(self, count: int) -> None:
        """After a commit that deleted ``count`` entries: a common word may be rare now."""
        if count:
            self._common.clear()
