"""Calling a memory plugin from tests: sync or async methods, short spellings.

Used by :mod:`toolang_core.testing.memory_conformance`; a plugin's own tests may use
:class:`MemoryDriver` too (``MemoryDriver(plugin, MemoryCaller())``).
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

from toolang_core.memory.types import (
    MemoryEntry,
    MemoryForget,
    MemoryHealth,
    MemoryItem,
    MemoryLimits,
    MemoryListRequest,
    MemoryPlugin,
    MemoryRecallRequest,
    MemoryRecallResult,
    MemoryWriteBatch,
    MemoryWriteResult,
)

CALL_TIMEOUT = 60.0
"""Seconds any one call (or a test's thread) may take before the test fails."""


async def _await(awaitable: Any) -> Any:
    return await awaitable


class MemoryCaller:
    """Calls a plugin method the way the runtime may: synchronous methods directly (in
    the calling thread), ``async`` ones and returned awaitables on one event loop that
    runs in its own thread for the whole test (so a plugin may keep loop-bound state)."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def __call__(self, method: Callable[..., Any], *args: Any) -> Any:
        if inspect.iscoroutinefunction(method):
            return self._run(method(*args))
        value = method(*args)
        return self._run(value) if inspect.isawaitable(value) else value

    def _run(self, awaitable: Any) -> Any:
        coroutine: Coroutine[Any, Any, Any] = _await(awaitable)
        future = asyncio.run_coroutine_threadsafe(coroutine, self._running_loop())
        return future.result(timeout=CALL_TIMEOUT)

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="memory-conformance-loop", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def close(self) -> None:
        """Stop the event loop (if one was started)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(CALL_TIMEOUT)
        loop.close()
        self._loop = self._thread = None


class MemoryDriver:
    """One plugin under test, with short spellings of the calls the tests make."""

    def __init__(self, plugin: MemoryPlugin, call: MemoryCaller) -> None:
        self.plugin = plugin
        self.call = call

    def save(
        self,
        agent: str,
        *texts: str,
        key: str | None = None,
        kind: str = "note",
        thread: str | None = None,
        turn: str | None = None,
        origin: str = "turn",
        ttl: float | None = None,
        meta: dict[str, Any] | None = None,
        owner: str | None = None,
    ) -> MemoryWriteResult:
        entries = tuple(
            MemoryEntry(text=text, key=key, kind=kind, ttl_seconds=ttl, meta=meta or {})
            for text in texts
        )
        batch = MemoryWriteBatch(
            agent_uri=f"toolang:agent/{agent}",
            agent_id=agent,
            entries=entries,
            thread_id=thread,
            turn_id=turn,
            origin=origin,
            owner=owner,
        )
        result: MemoryWriteResult = self.call(self.plugin.remember, batch)
        return result

    def recall(
        self,
        agent: str,
        query: str,
        *,
        thread: str | None = None,
        max_items: int = 8,
        max_chars: int = 4000,
        owner: str | None = None,
    ) -> MemoryRecallResult:
        request = MemoryRecallRequest(
            agent_uri=f"toolang:agent/{agent}",
            agent_id=agent,
            query_text=query,
            thread_id=thread,
            limits=MemoryLimits(max_items=max_items, max_chars=max_chars),
            owner=owner,
        )
        result: MemoryRecallResult = self.call(self.plugin.recall, request)
        return result

    def texts(self, agent: str, query: str, **kw: Any) -> list[str]:
        return [item.text for item in self.recall(agent, query, **kw).items]

    def listed(
        self,
        agent: str,
        *,
        thread: str | None = None,
        limit: int = 1000,
        owner: str | None = None,
    ) -> tuple[MemoryItem, ...]:
        request = MemoryListRequest(agent_id=agent, thread_id=thread, limit=limit, owner=owner)
        items: tuple[MemoryItem, ...] = tuple(self.call(self.plugin.list_entries, request))
        return items

    def listed_texts(self, agent: str, **kw: Any) -> list[str]:
        return [item.text for item in self.listed(agent, **kw)]

    def forget(self, agent: str, **kw: Any) -> int:
        return int(self.call(self.plugin.forget, MemoryForget(agent_id=agent, **kw)).forgotten)

    def health(self) -> MemoryHealth:
        health: MemoryHealth = self.call(self.plugin.health)
        return health


def tick() -> None:
    """Return once the clock reads later than it did on entry, so the next write is
    strictly newer than every earlier one (no fixed sleep)."""
    start = time.time()
    while time.time() <= start:
        pass


def wait_past(moment: float) -> None:
    """Block until the wall clock is past ``moment`` (TTL tests wait for real time)."""
    while (left := moment - time.time()) >= 0:
        time.sleep(min(left + 0.001, 0.05))
