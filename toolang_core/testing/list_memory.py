"""A memory plugin for tests that is nothing like SQLite.

``ListMemory`` keeps entries in a list (on a :class:`Shelf` that several plugin objects
may share, as processes share a database) and matches words as substrings; every
method is ``async``. The memory conformance suite proves it behaves (the core's
tests/test_memory_conformance.py), so a test that needs memory without a memory
plugin installed can rely on it: register ``ListMemory(shelf)``'s factory under
``toolang_register_memory`` and set ``[memory] plugin`` to its name.
"""

from __future__ import annotations

import re
import threading
import time
import unicodedata
from typing import Any

import attrs

from toolang_core.memory import (
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

PROVIDER = "list"


def _words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).casefold()
    return [w for w in re.findall(r"\w+|\S", text) if w[0].isalnum() or ord(w[0]) > 0x2000]


@attrs.define
class Row:
    id: int
    agent: str
    text: str
    key: str | None
    kind: str
    meta: dict[str, Any]
    thread: str | None
    turn: str | None
    origin: str
    created: float
    updated: float
    expires: float | None
    owner: str | None = None
    uses: int = 0
    used: float | None = None

    def item(self, score: float) -> MemoryItem:
        return MemoryItem(
            id=str(self.id),
            text=self.text,
            score=score,
            key=self.key,
            kind=self.kind,
            meta=self.meta,
            use_count=self.uses,
            last_used_at=self.used,
            provenance=Provenance(
                self.agent,
                self.thread,
                self.turn,
                self.origin,
                self.created,
                self.updated,
                owner=self.owner,
            ),
        )


@attrs.define
class Shelf:
    """What several ``ListMemory`` objects share (the 'database')."""

    rows: list[Row] = attrs.Factory(list)
    lock: threading.Lock = attrs.Factory(threading.Lock)
    next_id: int = 1


class ListMemory:
    """A memory plugin's object over one :class:`Shelf` (see the module docstring)."""

    def __init__(self, shelf: Shelf) -> None:
        self.shelf = shelf
        self.fail_next = False
        self.last_error: tuple[str, float] | None = None

    def _live(self, agent: str, thread: str | None, owner: str | None) -> list[Row]:
        now = time.time()
        return [
            r
            for r in self.shelf.rows
            if r.agent == agent
            and r.owner == owner
            and (thread is None or r.thread == thread)
            and (r.expires is None or r.expires > now)
        ]

    async def recall(self, request: MemoryRecallRequest) -> MemoryRecallResult:
        words = set(_words(request.query_text))
        scored = []
        with self.shelf.lock:
            for row in self._live(request.agent_id, request.thread_id, request.owner):
                text = unicodedata.normalize("NFKC", row.text).casefold()
                hits = [w for w in words if w in text]
                if hits:
                    scored.append((len(hits) + 0.01 * sum(text.count(w) for w in hits), row))
        scored.sort(key=lambda pair: -pair[0])
        items: list[MemoryItem] = []
        chars = 0
        for score, row in scored:
            if len(items) == request.limits.max_items:
                break
            if chars + len(row.text) <= request.limits.max_chars:
                row.uses, row.used = row.uses + 1, time.time()  # this recall is a use
                items.append(row.item(score))
                chars += len(row.text)
        return MemoryRecallResult(items=tuple(items), provider=PROVIDER)

    async def remember(self, batch: MemoryWriteBatch) -> MemoryWriteResult:
        if self.fail_next:
            self.fail_next = False
            self.last_error = ("the shelf is full", time.time())
            raise RuntimeError("the shelf is full")
        now = time.time()
        with self.shelf.lock:
            for entry in batch.entries:
                old = next(
                    (
                        r
                        for r in self.shelf.rows
                        if entry.key
                        and r.agent == batch.agent_id
                        and r.owner == batch.owner
                        and r.key == entry.key
                    ),
                    None,
                )
                if old is not None:
                    self.shelf.rows.remove(old)
                expires = None if entry.ttl_seconds is None else now + entry.ttl_seconds
                self.shelf.rows.append(
                    Row(
                        old.id if old else self.shelf.next_id,
                        batch.agent_id,
                        entry.text,
                        entry.key,
                        entry.kind,
                        dict(entry.meta),
                        batch.thread_id,
                        batch.turn_id,
                        batch.origin,
                        old.created if old else now,
                        now,
                        expires,
                        batch.owner,
                    )
                )
                self.shelf.next_id += 1
        return MemoryWriteResult(written=len(batch.entries), provider=PROVIDER)

    async def forget(self, request: MemoryForget) -> MemoryForgetResult:
        def doomed(r: Row) -> bool:
            if r.agent != request.agent_id or r.owner != request.owner:
                return False
            if request.keys:
                return r.key in request.keys
            return (
                (request.thread_id is None or r.thread == request.thread_id)
                and (request.kind is None or r.kind == request.kind)
                and (request.before is None or r.created < request.before)
            )

        with self.shelf.lock:
            gone = [r for r in self.shelf.rows if doomed(r)]
            self.shelf.rows = [r for r in self.shelf.rows if not doomed(r)]
        return MemoryForgetResult(forgotten=len(gone), provider=PROVIDER)

    async def list_entries(self, request: MemoryListRequest) -> tuple[MemoryItem, ...]:
        with self.shelf.lock:
            rows = sorted(
                self._live(request.agent_id, request.thread_id, request.owner),
                key=lambda r: (-r.updated, -r.id),
            )
        return tuple(r.item(0.0) for r in rows[: request.limit])

    async def health(self) -> MemoryHealth:
        error, at = self.last_error or (None, None)
        return MemoryHealth(
            status="ok",
            provider=PROVIDER,
            entries=len(self.shelf.rows),
            last_error=error,
            last_error_at=at,
        )

    def close(self) -> None:
        pass
