"""toolang-memory-frozen: a toolang memory plugin that keeps entries in one JSON file.

A starting point that passes toolang's memory conformance suite
(tests/test_toolang_memory_frozen.py). Entries live in ``[plugins.memory-frozen] path``
(default ``.toolang/frozen-memory.json`` beside toolang.toml), guarded by a lock
file so threads and processes share them; recall matches the query's words as
substrings of the text, ignoring case and Unicode form. Select it with
``[memory] plugin = "frozen"``. Replace the file with your store and keep the suite
passing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from toolang_core import PluginContext, RegisterFactory, RegisterSettings, hookimpl
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

PROVIDER = "frozen"
Row = dict[str, Any]


@attrs.frozen
class Settings:
    """[plugins.memory-frozen] in toolang.toml."""

    path: str = ".toolang/frozen-memory.json"


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _words(text: str) -> set[str]:
    found = re.findall(r"\w+|\S", _fold(text))
    return {w for w in found if w[0].isalnum() or ord(w[0]) > 0x2000}


def _item(row: Row, score: float) -> MemoryItem:
    return MemoryItem(
        id=str(row["id"]),
        text=row["text"],
        score=score,
        key=row["key"],
        kind=row["kind"],
        meta=row["meta"],
        provenance=Provenance(
            agent_id=row["agent"],
            thread_id=row["thread"],
            turn_id=row["turn"],
            origin=row["origin"],
            created_at=row["created"],
            updated_at=row["updated"],
            owner=row["owner"],
        ),
    )


class FrozenMemory:
    """Every method is synchronous: the runtime calls them in worker threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.last_error: tuple[str, float] | None = None

    @contextlib.contextmanager
    def _rows(self, *, write: bool) -> Iterator[dict[str, Any]]:
        """The file's content under its lock (exclusive to write), saved if ``write``."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX if write else fcntl.LOCK_SH)
            try:
                data = (
                    json.loads(self.path.read_text("utf-8"))
                    if self.path.exists()
                    else {"next_id": 1, "rows": []}
                )
                yield data
                if write:
                    temporary = self.path.with_suffix(".tmp")
                    temporary.write_text(json.dumps(data), "utf-8")
                    os.replace(temporary, self.path)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    @staticmethod
    def _live(rows: list[Row], agent: str, thread: str | None, owner: str | None) -> list[Row]:
        now = time.time()
        return [
            r
            for r in rows
            if r["agent"] == agent
            and r["owner"] == owner
            and (thread is None or r["thread"] == thread)
            and (r["expires"] is None or r["expires"] > now)
        ]

    def recall(self, request: MemoryRecallRequest) -> MemoryRecallResult:
        words = _words(request.query_text)
        with self._rows(write=False) as data:
            rows = self._live(data["rows"], request.agent_id, request.thread_id, request.owner)
        scored = []
        for row in rows:
            text = _fold(row["text"])
            hits = [w for w in words if w in text]
            if hits:
                scored.append((len(hits) + 0.01 * sum(text.count(w) for w in hits), row))
        scored.sort(key=lambda pair: -pair[0])
        items: list[MemoryItem] = []
        chars = 0
        for score, row in scored:
            if len(items) == request.limits.max_items:
                break
            if chars + len(row["text"]) <= request.limits.max_chars:
                items.append(_item(row, score))
                chars += len(row["text"])
        return MemoryRecallResult(items=tuple(items), provider=PROVIDER)

    def remember(self, batch: MemoryWriteBatch) -> MemoryWriteResult:
        try:
            with self._rows(write=True) as data:
                for entry in batch.entries:
                    self._upsert(data, batch, entry, time.time())
        except OSError as exc:
            self.last_error = (f"{type(exc).__name__}: {exc}", time.time())
            raise
        return MemoryWriteResult(written=len(batch.entries), provider=PROVIDER)

    @staticmethod
    def _upsert(data: dict[str, Any], batch: MemoryWriteBatch, entry: Any, now: float) -> None:
        def same(r: Row) -> bool:
            return (r["agent"], r["owner"], r["key"]) == (batch.agent_id, batch.owner, entry.key)

        old = next((r for r in data["rows"] if entry.key and same(r)), None)
        if old is not None:
            data["rows"].remove(old)
        else:
            data["next_id"] += 1
        data["rows"].append(
            {
                "id": old["id"] if old else data["next_id"] - 1,
                "agent": batch.agent_id,
                "owner": batch.owner,
                "text": entry.text,
                "key": entry.key,
                "kind": entry.kind,
                "meta": dict(entry.meta),
                "thread": batch.thread_id,
                "turn": batch.turn_id,
                "origin": batch.origin,
                "created": old["created"] if old else now,
                "updated": now,
                "expires": None if entry.ttl_seconds is None else now + entry.ttl_seconds,
            }
        )

    def forget(self, request: MemoryForget) -> MemoryForgetResult:
        def doomed(r: Row) -> bool:
            if (r["agent"], r["owner"]) != (request.agent_id, request.owner):
                return False
            if request.keys:
                return r["key"] in request.keys
            return (
                (request.thread_id is None or r["thread"] == request.thread_id)
                and (request.kind is None or r["kind"] == request.kind)
                and (request.before is None or r["created"] < request.before)
            )

        with self._rows(write=True) as data:
            kept = [r for r in data["rows"] if not doomed(r)]
            forgotten = len(data["rows"]) - len(kept)
            data["rows"] = kept
        return MemoryForgetResult(forgotten=forgotten, provider=PROVIDER)

    def list_entries(self, request: MemoryListRequest) -> tuple[MemoryItem, ...]:
        with self._rows(write=False) as data:
            rows = self._live(data["rows"], request.agent_id, request.thread_id, request.owner)
        rows.sort(key=lambda r: (-r["updated"], -r["id"]))
        return tuple(_item(r, 0.0) for r in rows[: request.limit])

    def health(self) -> MemoryHealth:
        with self._rows(write=False) as data:
            entries = len(data["rows"])
        error, at = self.last_error or (None, None)
        return MemoryHealth(
            status="ok", provider=PROVIDER, entries=entries, last_error=error, last_error_at=at
        )

    def close(self) -> None:
        """Nothing to close: every call opens and closes the file."""


def _memory(context: PluginContext) -> FrozenMemory:
    path = Path((context.settings or Settings()).path).expanduser()
    return FrozenMemory(path if path.is_absolute() else context.config.base_dir / path)


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(Settings)


@hookimpl
def toolang_register_memory(register: RegisterFactory) -> None:
    register(PROVIDER, _memory, description="entries in a JSON file")
