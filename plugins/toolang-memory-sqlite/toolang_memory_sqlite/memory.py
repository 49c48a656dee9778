"""The ``sqlite`` memory plugin: entries in SQLite, recalled with FTS5 and recency.

Every method but ``recall`` and ``remember`` is synchronous and thread-safe (the runtime
runs them in worker threads); those two are ``async`` and run in the plugin's own
database thread, ``remember`` writing the batches of concurrent turns together
(:mod:`.group`); ``recall_now`` and ``remember_now`` are their synchronous forms. A database failure
is remembered for :meth:`SQLiteMemory.health` and raised as :class:`SQLiteMemoryError`
naming the operation and the file; a batch the plugin refuses (too long, bad TTL, meta
that is not JSON) raises ``ValueError`` and stores nothing.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, cast

from toolang_core import StoreError, redact, redact_text
from toolang_core.memory import (
    MemoryEntry,
    MemoryForget,
    MemoryForgetResult,
    MemoryHealth,
    MemoryItem,
    MemoryListRequest,
    MemoryRecallRequest,
    MemoryRecallResult,
    MemoryWriteBatch,
    MemoryWriteResult,
    Provenance,
)
from toolang_memory_sqlite import ranking, search, text
from toolang_memory_sqlite.database import Connections, MemoryClosed
from toolang_memory_sqlite.group import GroupCalls
from toolang_memory_sqlite.schema import ENTRIES, FTS
from toolang_memory_sqlite.settings import NAME, PROVIDER, MemorySQLiteSettings

DEGRADED_FOR_SECONDS: Final = 300.0
"""``health`` says ``degraded`` while the last failure is at most this old."""
KEYS_PER_STATEMENT: Final = 500

ITEM_COLUMNS: Final = (
    "id, agent_id, thread_id, turn_id, origin, key, kind, meta, created_at, updated_at, owner"
)
LIVE: Final = "(expires_at IS NULL OR expires_at > ?)"
INSERT_ENTRY: Final = (
    f"INSERT INTO {ENTRIES} (thread_id, turn_id, origin, kind, text, meta, id, agent_id, key, "
    "created_at, updated_at, expires_at, owner) VALUES"
)
INSERT_INDEXED: Final = f"INSERT INTO {FTS} (rowid, scope, body) VALUES"
ROWS_PER_STATEMENT: Final = 500
"""Rows of one multi-row INSERT (13 columns: well within SQLite's 32,766 variables)."""

Row = tuple[MemoryEntry, str | None]
"""An entry to write, with its meta as JSON."""
Call = MemoryRecallRequest | tuple[MemoryWriteBatch, list[Row]]
"""What the runtime hands the database thread: a recall, or a batch to write."""


class SQLiteMemoryError(RuntimeError):
    """The database failed (locked, full, unreadable); the message names file and call."""


class _LastError:
    """The most recent failure, with its time (shared by every thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.message: str | None = None
        self.at: float | None = None

    def record(self, message: str, at: float) -> None:
        with self._lock:
            self.message, self.at = message, at


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
        self.settings = settings or MemorySQLiteSettings()
        self.shared_with_store = shared_with_store
        self._clock = clock
        self._db = Connections(
            path, busy_timeout=self.settings.busy_timeout_seconds, synchronous=synchronous
        )
        self._last_error = _LastError()
        self._thread: ThreadPoolExecutor | None = None
        self._thread_lock = threading.Lock()
        self._calls: GroupCalls[Call, MemoryRecallResult | MemoryWriteResult] = GroupCalls(
            self._group, self._own_thread
        )
        self._common = search.CommonWords()
        self._slots: dict[str, int] = {}  # scope key -> slot (search.Scope.of)

    # -- the contract ---------------------------------------------------------------------

    def _own_thread(self) -> ThreadPoolExecutor:
        """The plugin's database thread: recalls and writes of the runtime share its
        connection, whose page cache a write of its own keeps (another connection's
        write makes SQLite drop a reader's whole cache)."""
        with self._thread_lock:
            if self._thread is None:
                self._thread = ThreadPoolExecutor(1, thread_name_prefix=NAME)
            return self._thread

    async def recall(self, request: MemoryRecallRequest) -> MemoryRecallResult:
        """:meth:`recall_now` in the plugin's database thread (see :meth:`_own_thread`);
        recalls handed in while others are under way are done together after them, in
        one call to that thread (:mod:`.group`)."""
        return cast(MemoryRecallResult, await self._calls.add(request))

    def _group(
        self, calls: Sequence[Call]
    ) -> list[MemoryRecallResult | MemoryWriteResult | Exception]:
        """The recalls and writes of concurrent turns, handed to the database thread
        together (one hop there and one wake-up of the event loop back for both): the
        recalls first (their turns wait to start), then the writes in one transaction."""
        recalls = [c for c in calls if isinstance(c, MemoryRecallRequest)]
        writes = [c for c in calls if not isinstance(c, MemoryRecallRequest)]
        recalled = iter(self._recall_group(recalls))
        written: Iterator[MemoryWriteResult | Exception] = iter(())
        if writes:
            try:
                written = iter(self._write_group(writes))
            except Exception as exc:  # e.g. the file locked: the writes fail, not the recalls
                written = iter([exc] * len(writes))
        return [next(recalled if isinstance(c, MemoryRecallRequest) else written) for c in calls]

    def _recall_group(
        self, requests: Sequence[MemoryRecallRequest]
    ) -> list[MemoryRecallResult | Exception]:
        """:meth:`recall_now` for each of ``requests``: its result or its exception."""
        outcomes: list[MemoryRecallResult | Exception] = []
        for request in requests:
            try:
                outcomes.append(self.recall_now(request))
            except Exception as exc:
                outcomes.append(exc)
        return outcomes

    def recall_now(self, request: MemoryRecallRequest) -> MemoryRecallResult:
        """The agent's entries that best match ``request.query_text``: candidates found
        with bounded work (``search``), ranked and limited (``ranking``)."""
        started = time.perf_counter()
        chosen = text.query_terms(request.query_text, self.settings.max_query_terms)
        diagnostics: dict[str, Any] = {"terms": len(chosen)}
        ranked: list[ranking.Ranked] = []
        items: tuple[MemoryItem, ...] = ()
        now = self._clock()
        with self._guard("recall"):
            conn = self._db.get()
            scope = search.Scope.of(
                conn, request.agent_id, request.thread_id, request.owner, self._slots
            )
            if chosen and scope is not None:
                found = search.find(
                    conn,
                    scope,
                    chosen,
                    budget=self.settings.ranked_matches,
                    now=now,
                    limit=self.settings.candidates,
                    common=self._common,
                )
                scored = ranking.blend(
                    found.candidates,
                    now=now,
                    weight=self.settings.recency_weight,
                    half_life_days=self.settings.recency_half_life_days,
                )
                ranked = ranking.within_limits(
                    scored,
                    max_items=request.limits.max_items,
                    max_chars=request.limits.max_chars,
                )
                items = self._ranked_items(conn, ranked)
                diagnostics.update(
                    mode=found.mode,
                    candidates=len(found.candidates),
                    dropped_terms=found.dropped_terms,
                )
        diagnostics.update(
            returned=len(items),
            clipped=sum(r.clipped for r in ranked),
            ms=round((time.perf_counter() - started) * 1000, 3),
        )
        return MemoryRecallResult(items=items, provider=PROVIDER, diagnostics=diagnostics)

    async def remember(self, batch: MemoryWriteBatch) -> MemoryWriteResult:
        """Store ``batch``: all of it or, on any error, nothing. Batches handed in while
        another write is under way are written together after it, in one transaction
        (a savepoint each: one that fails leaves the others), in a worker thread; each
        call returns once its batch is committed."""
        rows = [self._checked(batch, n, entry) for n, entry in enumerate(batch.entries)]
        return cast(MemoryWriteResult, await self._calls.add((batch, rows)))

    def remember_now(self, batch: MemoryWriteBatch) -> MemoryWriteResult:
        """:meth:`remember`, synchronously in the calling thread, in a transaction of
        its own (for scripts and benchmarks that call the plugin directly)."""
        rows = [self._checked(batch, n, entry) for n, entry in enumerate(batch.entries)]
        now = self._clock()
        with self._guard("remember"), self._db.write() as conn:
            pruned = self._prune(conn, now, self.settings.prune_batch)
            self._write_batch(conn, batch, rows, now)
        self._deleted(pruned)
        return _written(rows, pruned)

    def _write_group(
        self, group: Sequence[tuple[MemoryWriteBatch, list[Row]]]
    ) -> list[MemoryWriteResult | Exception]:
        """Write the batches of ``group`` in one transaction: all together in a few
        statements when none has a key (:meth:`_insert_group`), else (or when that fails)
        each in a savepoint, one that fails leaving the others."""
        now = self._clock()
        with self._guard("remember"), self._db.write() as conn:
            pruned = self._prune(conn, now, self.settings.prune_batch)
            if self._insert_group(conn, group, now):
                outcomes: list[MemoryWriteResult | Exception] = [
                    _written(rows, pruned if n == 0 else 0) for n, (_, rows) in enumerate(group)
                ]
            else:
                outcomes = self._each_batch(conn, group, now, pruned)
        self._deleted(pruned)
        return outcomes

    def _each_batch(
        self,
        conn: sqlite3.Connection,
        group: Sequence[tuple[MemoryWriteBatch, list[Row]]],
        now: float,
        pruned: int,
    ) -> list[MemoryWriteResult | Exception]:
        outcomes: list[MemoryWriteResult | Exception] = []
        for batch, rows in group:
            conn.execute("SAVEPOINT batch")
            try:
                with self._guard("remember"):
                    self._write_batch(conn, batch, rows, now)
            except (ValueError, SQLiteMemoryError) as exc:
                conn.execute("ROLLBACK TO batch")
                conn.execute("RELEASE batch")
                outcomes.append(exc)
                continue
            conn.execute("RELEASE batch")
            outcomes.append(_written(rows, pruned))
            pruned = 0  # counted once, for the first batch of the group
        return outcomes

    def _insert_group(
        self,
        conn: sqlite3.Connection,
        group: Sequence[tuple[MemoryWriteBatch, list[Row]]],
        now: float,
    ) -> bool:
        """Insert every entry of ``group`` with one statement per table (and one per
        agent for the ids) — each statement a hand-over of the GIL and back, contended
        by the event loop's thread. ``False``, having written nothing, when an entry has
        a key (an upsert) or a statement fails: then each batch is written alone."""
        if any(entry.key is not None for _, rows in group for entry, _ in rows):
            return False
        conn.execute("SAVEPOINT grouped")
        try:
            with self._guard("remember"):
                counts: dict[str, int] = {}
                for batch, rows in group:
                    scope = search.scope_key(batch.agent_id, batch.owner)
                    counts[scope] = counts.get(scope, 0) + len(rows)
                ids = {
                    scope: iter(search.allocate_ids(conn, scope, count))
                    for scope, count in counts.items()
                }
                entries: list[tuple[Any, ...]] = []
                indexed: list[tuple[Any, ...]] = []
                for batch, rows in group:
                    scope = search.scope_key(batch.agent_id, batch.owner)
                    tokens = search.scope_text(scope, batch.thread_id)
                    for entry, meta in rows:
                        row_id = next(ids[scope])
                        body = _masked(entry.text)
                        expires = None if entry.ttl_seconds is None else now + entry.ttl_seconds
                        entries.append(
                            (
                                *(batch.thread_id, batch.turn_id, batch.origin, entry.kind),
                                *(body, meta, row_id, batch.agent_id, None, now, now, expires),
                                batch.owner,
                            )
                        )
                        indexed.append((row_id, tokens, text.index_text(body)))
                _insert_rows(conn, INSERT_ENTRY, entries)
                _insert_rows(conn, INSERT_INDEXED, indexed)
        except (ValueError, SQLiteMemoryError):
            conn.execute("ROLLBACK TO grouped")
            conn.execute("RELEASE grouped")
            return False
        conn.execute("RELEASE grouped")
        return True

    def _write_batch(
        self,
        conn: sqlite3.Connection,
        batch: MemoryWriteBatch,
        rows: list[Row],
        now: float,
    ) -> None:
        ids = iter(
            search.allocate_ids(conn, search.scope_key(batch.agent_id, batch.owner), len(rows))
        )
        for entry, meta in rows:
            self._upsert(conn, batch, entry, meta, now=now, new_ids=ids)

    def forget(self, request: MemoryForget) -> MemoryForgetResult:
        """Delete the agent's entries named by key, or matching the filter."""
        forgotten = 0
        with self._guard("forget"), self._db.write() as conn:
            for where, params in _forget_filters(request):
                conn.execute(
                    f"DELETE FROM {FTS} WHERE rowid IN (SELECT id FROM {ENTRIES} WHERE {where})",
                    params,
                )
                forgotten += conn.execute(f"DELETE FROM {ENTRIES} WHERE {where}", params).rowcount
        self._deleted(forgotten)
        return MemoryForgetResult(forgotten=forgotten, provider=PROVIDER)

    def list_entries(self, request: MemoryListRequest) -> tuple[MemoryItem, ...]:
        """The agent's live entries (of one thread, when given), newest write first."""
        where, params = "agent_id = ? AND owner IS ?", [request.agent_id, request.owner]
        if request.thread_id is not None:
            where += " AND thread_id = ?"
            params.append(request.thread_id)
        with self._guard("list_entries"):
            rows = self._db.get().execute(
                f"SELECT {ITEM_COLUMNS}, text FROM {ENTRIES} WHERE {where} AND {LIVE} "
                "ORDER BY updated_at DESC, id DESC LIMIT ?",
                [*params, self._clock(), max(0, request.limit)],
            )
            return tuple(_item(row[:-1], row[-1], 0.0) for row in rows)

    def health(self) -> MemoryHealth:
        """Entries and size after pruning what expired; ``down`` when the file fails."""
        try:
            try:
                pruned = self.prune()
            except SQLiteMemoryError:  # e.g. a long write elsewhere: kept as the last error
                pruned = 0
            with self._guard("health"):
                conn = self._db.get()
                entries = conn.execute(f"SELECT count(*) FROM {ENTRIES}").fetchone()[0]
                size = self._size_bytes(conn)
        except (SQLiteMemoryError, MemoryClosed) as exc:
            return self._health("down", str(exc))
        where = "in the execution store's file " if self.shared_with_store else ""
        failed_at = self._last_error.at
        recent = failed_at is not None and self._clock() - failed_at <= DEGRADED_FOR_SECONDS
        status = "degraded" if recent else "ok"
        return self._health(
            status,
            f"{entries} entries {where}at {self.path}",
            entries=entries,
            size_bytes=size,
            meta={"pruned_expired": pruned},
        )

    def prune(self) -> int:
        """Delete every expired entry (in batches of ``prune_batch``); return how many."""
        total = 0
        while True:
            with self._guard("prune"), self._db.write() as conn:
                removed = self._prune(conn, self._clock(), self.settings.prune_batch)
            self._deleted(removed)
            total += removed
            if removed < self.settings.prune_batch:
                return total

    def close(self) -> None:
        """Close the database connections (of every thread)."""
        self._db.close()
        with self._thread_lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.shutdown(wait=False)

    # -- recall ---------------------------------------------------------------------------

    def _ranked_items(
        self, conn: sqlite3.Connection, ranked: Sequence[ranking.Ranked]
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
                (longest, *(r.candidate.id for r in ranked)),
            )
        }
        items = []
        for r in ranked:
            row = rows[r.candidate.id]
            body = ranking.clip(row[-1][: r.keep_chars + 1], r.keep_chars)
            items.append(_item(row[:-1], body, round(r.score, 6)))
        return tuple(items)

    # -- writing --------------------------------------------------------------------------

    def _checked(self, batch: MemoryWriteBatch, n: int, entry: MemoryEntry) -> Row:
        """Refuse what cannot be stored, before anything is written; the entry's meta as JSON."""
        where = f"{NAME}: entry {n + 1} of {len(batch.entries)} for agent {batch.agent_id!r}"
        problem = None
        if len(entry.text) > self.settings.max_entry_chars:
            problem = (
                f"has {len(entry.text)} characters; the limit is "
                f"{self.settings.max_entry_chars} ([plugins.{NAME}] max_entry_chars)"
            )
        elif entry.ttl_seconds is not None and not (
            math.isfinite(entry.ttl_seconds) and entry.ttl_seconds > 0
        ):
            problem = f"ttl_seconds must be a positive number of seconds, not {entry.ttl_seconds}"
        meta = None
        if problem is None and entry.meta:
            try:
                meta = json.dumps(redact(dict(entry.meta)), ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError) as exc:
                problem = f"meta must be JSON-serialisable ({exc})"
        if problem is not None:
            message = f"{where}: {problem}; nothing of this batch was stored"
            self._last_error.record(message, self._clock())
            raise ValueError(message)
        return entry, meta

    def _upsert(
        self,
        conn: sqlite3.Connection,
        batch: MemoryWriteBatch,
        entry: MemoryEntry,
        meta: str | None,
        *,
        now: float,
        new_ids: Iterator[int],
    ) -> None:
        expires = None if entry.ttl_seconds is None else now + entry.ttl_seconds
        body = _masked(entry.text)
        values = (batch.thread_id, batch.turn_id, batch.origin, entry.kind, body, meta)
        existing = None
        if entry.key is not None:
            existing = conn.execute(
                f"SELECT id FROM {ENTRIES} WHERE agent_id = ? AND owner IS ? AND key = ?",
                (batch.agent_id, batch.owner, entry.key),
            ).fetchone()
        if existing is None:
            row_id = next(new_ids)
            conn.execute(
                f"{INSERT_ENTRY} {_marks(13)}",
                (*values, row_id, batch.agent_id, entry.key, now, now, expires, batch.owner),
            )
        else:
            row_id = existing[0]
            conn.execute(
                f"UPDATE {ENTRIES} SET thread_id = ?, turn_id = ?, origin = ?, kind = ?, "
                "text = ?, meta = ?, updated_at = ?, expires_at = ? WHERE id = ?",
                (*values, now, expires, row_id),
            )
            conn.execute(f"DELETE FROM {FTS} WHERE rowid = ?", (row_id,))
        scope = search.scope_text(search.scope_key(batch.agent_id, batch.owner), batch.thread_id)
        conn.execute(f"{INSERT_INDEXED} {_marks(3)}", (row_id, scope, text.index_text(body)))

    def _deleted(self, count: int) -> None:
        """After a commit that deleted ``count`` entries: a common word may be rare now."""
        if count:
            self._common.clear()

    def _prune(self, conn: sqlite3.Connection, now: float, limit: int) -> int:
        ids = [
            row[0]
            for row in conn.execute(
                f"SELECT id FROM {ENTRIES} WHERE expires_at IS NOT NULL AND expires_at <= ? "
                "ORDER BY expires_at LIMIT ?",
                (now, limit),
            )
        ]
        if ids:
            marks = ", ".join("?" * len(ids))
            conn.execute(f"DELETE FROM {FTS} WHERE rowid IN ({marks})", ids)
            conn.execute(f"DELETE FROM {ENTRIES} WHERE id IN ({marks})", ids)
        return len(ids)

    # -- health and errors ----------------------------------------------------------------

    def _size_bytes(self, conn: sqlite3.Connection) -> int | None:
        """Bytes of this plugin's tables: the whole file, or (sharing the store's file)
        the pages of the ``memory_`` tables and indexes, when SQLite can tell."""
        if not self.shared_with_store:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            return int(pages * page_size)
        names = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE name LIKE 'memory\\_%' ESCAPE '\\' "
                "AND type IN ('table', 'index') AND rootpage > 0"
            )
        ]
        try:
            return sum(
                conn.execute(
                    "SELECT pgsize FROM dbstat WHERE name = ? AND aggregate = 1", (name,)
                ).fetchone()[0]
                or 0
                for name in names
            )
        except sqlite3.OperationalError:  # SQLite built without the dbstat table
            return None

    def _health(self, status: Any, detail: str, **values: Any) -> MemoryHealth:
        return MemoryHealth(
            status=status,
            provider=PROVIDER,
            detail=detail,
            last_error=self._last_error.message,
            last_error_at=self._last_error.at,
            **values,
        )

    @contextmanager
    def _guard(self, operation: str) -> Iterator[None]:
        """Turn a database failure into :class:`SQLiteMemoryError` (and text SQLite cannot
        encode into ``ValueError``), remembered for health."""
        try:
            yield
        except UnicodeEncodeError as exc:  # a lone surrogate, e.g. from a bad JSON escape
            message = (
                f"{NAME}: {operation}: text with a lone surrogate ({exc.object[exc.start]!r} at "
                f"position {exc.start}) is not valid Unicode and cannot be stored or searched"
            )
            self._last_error.record(message, self._clock())
            raise ValueError(message) from None
        except (sqlite3.Error, StoreError) as exc:
            message = f"{NAME}: {operation} on {self.path} failed: {exc}"
            self._last_error.record(message, self._clock())
            raise SQLiteMemoryError(message) from exc


def _masked(body: str) -> str:
    """``body`` as the runtime's redaction policy masks it: no raw secret at rest, in the
    table or in the full-text index (the runtime's memory service masks first — then
    this finds the text known clean — and a plugin used on its own is held to it too)."""
    return redact_text(body)


def _marks(columns: int) -> str:
    return "(" + ", ".join("?" * columns) + ")"


def _insert_rows(conn: sqlite3.Connection, insert: str, rows: list[tuple[Any, ...]]) -> None:
    """``rows`` inserted with ``insert`` (``INSERT INTO … VALUES``), many per statement."""
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        chunk = rows[start : start + ROWS_PER_STATEMENT]
        marks = ", ".join([_marks(len(chunk[0]))] * len(chunk))
        conn.execute(f"{insert} {marks}", [value for row in chunk for value in row])


def _written(rows: Sequence[Row], pruned: int) -> MemoryWriteResult:
    return MemoryWriteResult(
        written=len(rows), provider=PROVIDER, diagnostics={"pruned_expired": pruned}
    )


def _forget_filters(request: MemoryForget) -> Iterator[tuple[str, list[Any]]]:
    """WHERE clauses (with parameters) selecting what ``request`` forgets."""
    if request.keys:
        keys = list(dict.fromkeys(request.keys))
        for start in range(0, len(keys), KEYS_PER_STATEMENT):
            chunk = keys[start : start + KEYS_PER_STATEMENT]
            marks = ", ".join("?" * len(chunk))
            yield (
                f"agent_id = ? AND owner IS ? AND key IN ({marks})",
                [request.agent_id, request.owner, *chunk],
            )
        return
    where: list[str] = ["agent_id = ?", "owner IS ?"]
    params: list[Any] = [request.agent_id, request.owner]
    for clause, value in (
        ("thread_id = ?", request.thread_id),
        ("kind = ?", request.kind),
        ("created_at < ?", request.before),
    ):
        if value is not None:
            where.append(clause)
            params.append(value)
    yield " AND ".join(where), params


def _item(row: Sequence[Any], body: str, score: float) -> MemoryItem:
    """A :class:`MemoryItem` from a row of :data:`ITEM_COLUMNS` and its (maybe clipped) text."""
    row_id, agent, thread, turn, origin, key, kind, meta, created, updated, owner = row
    return MemoryItem(
        id=str(row_id),
        text=body,
        score=score,
        key=key,
        kind=kind,
        meta=json.loads(meta) if meta else {},
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
