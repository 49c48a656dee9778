"""The runtime's side of memory: one plugin, called with limits, timeouts and scoping.

Everything the runtime and the ``memory_agent_*`` tools do with memory goes through
:class:`MemoryService`. It calls the plugin's methods (synchronous ones in a worker
thread, so a slow or hung plugin never stalls the event loop), bounds them with the
configured timeouts, and turns every failure into an outcome value with the plugin's
name, a summary of the request and the diagnostics — for the traces. Nothing here
raises into a turn.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
import structlog

from toolang_core.errors import PLUGIN_FAILURES, describe_exception
from toolang_core.memory.types import (
    MemoryEntry,
    MemoryForget,
    MemoryForgetResult,
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
from toolang_core.redaction import redact, redact_text
from toolang_core.store.owners import is_own

if TYPE_CHECKING:
    from toolang_core.config.model import MemoryConfig

log = structlog.get_logger("toolang.memory")
T = TypeVar("T")
SUMMARY_CHARS = 120


class MemoryUnavailable(Exception):
    """The memory plugin could not be called (failed to start, raised, timed out)."""


def agent_uri(agent_id: str) -> str:
    """The global name of an agent in memory requests."""
    return f"toolang:agent/{agent_id}"


def _clip(text: str, limit: int = SUMMARY_CHARS) -> str:
    text = " ".join(redact_text(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@attrs.frozen
class MemoryOutcome:
    """One call to the memory plugin as the traces record it.

    ``ok`` false means the call failed or timed out (``error`` says how); ``degraded``
    is set on recalls that failed — the turn went on without memory.
    """

    operation: str
    plugin: str
    request: Mapping[str, Any]
    ok: bool
    duration_ms: float
    error: str | None = None
    diagnostics: Mapping[str, Any] = attrs.field(factory=dict)
    count: int = 0

    @property
    def degraded(self) -> bool:
        return not self.ok

    def to_json(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "plugin": self.plugin,
            "request": dict(self.request),
            "ok": self.ok,
            "degraded": self.degraded,
            "error": self.error,
            "diagnostics": dict(self.diagnostics),
            "count": self.count,
            "duration_ms": round(self.duration_ms, 3),
        }


class MemoryService:
    """The configured memory plugin of one runtime (or the reason it is unavailable)."""

    def __init__(
        self,
        name: str,
        config: MemoryConfig,
        plugin: MemoryPlugin | None,
        *,
        start_error: str | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.plugin = plugin
        self.start_error = start_error
        self._limits = MemoryLimits(max_items=config.max_items, max_chars=config.max_chars)
        self._is_async: dict[str, bool] = {}
        """Whether the plugin's method of that name is a coroutine function (asked once:
        ``inspect`` costs a microsecond a call, twice a turn)."""

    @classmethod
    def build(cls, name: str, config: MemoryConfig, factory: Callable[[], Any]) -> MemoryService:
        """Build the plugin; a factory that raises leaves the service down, not the runtime."""
        try:
            plugin = factory()
        except Exception as exc:
            error = f"memory plugin {name!r} failed to start: {describe_exception(exc)}"
            log.error("memory.start_failed", plugin=name, error=error)
            return cls(name, config, None, start_error=error)
        missing = [m for m in ("recall", "remember", "forget", "health") if not hasattr(plugin, m)]
        if missing:
            error = (
                f"memory plugin {name!r} returned {type(plugin).__name__}, which lacks "
                f"{', '.join(missing)} (see docs/hooks/memory.md)"
            )
            log.error("memory.start_failed", plugin=name, error=error)
            return cls(name, config, None, start_error=error)
        return cls(name, config, plugin)

    @property
    def limits(self) -> MemoryLimits:
        """The configured limits of a recall (one value: the config is frozen)."""
        return self._limits

    async def _call(self, method: str, argument: Any, timeout: float) -> Any:
        """Call ``plugin.<method>(argument)`` (no argument when ``None``) within ``timeout``.

        :raises MemoryUnavailable: naming the plugin and what went wrong.
        """
        if self.plugin is None:
            raise MemoryUnavailable(self.start_error or f"memory plugin {self.name!r} is down")
        function = getattr(self.plugin, method)
        is_async = self._is_async.get(method)
        if is_async is None:
            is_async = self._is_async[method] = inspect.iscoroutinefunction(function)
        args = () if argument is None else (argument,)
        try:
            async with asyncio.timeout(timeout):
                if is_async:
                    return await function(*args)
                value = await asyncio.to_thread(function, *args)
                return await value if inspect.isawaitable(value) else value
        except TimeoutError:
            raise MemoryUnavailable(
                f"memory plugin {self.name!r}: {method} took longer than {timeout:g} s"
            ) from None
        except PLUGIN_FAILURES as exc:  # a plugin's sys.exit() too
            raise MemoryUnavailable(
                f"memory plugin {self.name!r}: {method} failed: {describe_exception(exc)}"
            ) from None

    async def _outcome(
        self,
        operation: str,
        argument: Any,
        request: Mapping[str, Any],
        timeout: float,
        count: Callable[[Any], int],
    ) -> tuple[Any, MemoryOutcome]:
        started = time.perf_counter()
        try:
            value = await self._call(operation, argument, timeout)
        except MemoryUnavailable as exc:
            outcome = MemoryOutcome(
                operation,
                self.name,
                request,
                ok=False,
                duration_ms=(time.perf_counter() - started) * 1000,
                error=str(exc),
            )
            log.warning("memory.failed", plugin=self.name, operation=operation, error=str(exc))
            return None, outcome
        diagnostics = getattr(value, "diagnostics", None) or {}
        return value, MemoryOutcome(
            operation,
            self.name,
            request,
            ok=True,
            duration_ms=(time.perf_counter() - started) * 1000,
            diagnostics=dict(diagnostics),
            count=count(value),
        )

    # -- what the runtime does ------------------------------------------------------------

    async def recall(
        self, request: MemoryRecallRequest
    ) -> tuple[MemoryRecallResult | None, MemoryOutcome]:
        """Recall within ``recall_timeout_seconds``; ``None`` result when it failed."""
        summary = {
            "agent_id": request.agent_id,
            "thread_id": request.thread_id,
            "query": _clip(request.query_text),
            "strategy": request.execution_strategy,
            "max_items": request.limits.max_items,
            "max_chars": request.limits.max_chars,
        }
        result, outcome = await self._outcome(
            "recall",
            request,
            summary,
            self.config.recall_timeout_seconds,
            lambda r: len(r.items) + len(r.facts) + len(r.summaries),
        )
        if result is not None:
            result = _within_limits(result, request.agent_id, request.limits, request.owner)
        return result, outcome

    async def remember(self, batch: MemoryWriteBatch) -> tuple[int, MemoryOutcome]:
        """Write within ``write_timeout_seconds``; the count written (0 when it failed)."""
        summary = {
            "agent_id": batch.agent_id,
            "thread_id": batch.thread_id,
            "entries": len(batch.entries),
            "origin": batch.origin,
        }
        result, outcome = await self._outcome(
            "remember",
            masked(batch),
            summary,
            self.config.write_timeout_seconds,
            lambda r: int(r.written),
        )
        written = int(result.written) if isinstance(result, MemoryWriteResult) else 0
        return written, outcome

    # -- explicit use (tools, CLI) --------------------------------------------------------

    async def save(
        self,
        agent_id: str,
        text: str,
        *,
        key: str | None = None,
        kind: str = "note",
        thread_id: str | None = None,
        turn_id: str | None = None,
        origin: str = "tool",
        ttl_seconds: float | None = None,
        owner: str | None = None,
    ) -> int:
        """Store one entry for ``owner``'s ``agent_id``. :raises MemoryUnavailable:"""
        batch = MemoryWriteBatch(
            agent_uri=agent_uri(agent_id),
            agent_id=agent_id,
            entries=(MemoryEntry(text=text, key=key, kind=kind, ttl_seconds=ttl_seconds),),
            thread_id=thread_id,
            turn_id=turn_id,
            origin=origin,
            owner=owner,
        )
        result: MemoryWriteResult = await self._call(
            "remember", masked(batch), self.config.write_timeout_seconds
        )
        return int(result.written)

    async def search(
        self,
        agent_id: str,
        query: str,
        *,
        thread_id: str | None = None,
        limits: MemoryLimits | None = None,
        origin: str = "tool",
        owner: str | None = None,
    ) -> MemoryRecallResult:
        """What ``owner``'s ``agent_id`` remembers about ``query``. :raises MemoryUnavailable:"""
        limits = limits or self.limits
        request = MemoryRecallRequest(
            agent_uri=agent_uri(agent_id),
            agent_id=agent_id,
            query_text=query,
            thread_id=thread_id,
            origin=origin,
            execution_strategy="search",
            limits=limits,
            owner=owner,
        )
        result = await self._call("recall", request, self.config.recall_timeout_seconds)
        return _within_limits(result, agent_id, limits, owner)

    async def forget(self, request: MemoryForget) -> int:
        """Delete entries of ``request.agent_id``. :raises MemoryUnavailable:"""
        result: MemoryForgetResult = await self._call(
            "forget", request, self.config.write_timeout_seconds
        )
        return int(result.forgotten)

    async def list_entries(self, request: MemoryListRequest) -> tuple[MemoryItem, ...]:
        """:raises MemoryUnavailable:"""
        items = await self._call("list_entries", request, self.config.recall_timeout_seconds)
        return tuple(
            i
            for i in items
            if i.provenance.agent_id == request.agent_id
            and is_own(i.provenance.owner, request.owner)
        )

    async def health(self) -> MemoryHealth:
        """The plugin's health; ``down`` with the reason when it cannot be asked."""
        try:
            health: MemoryHealth = await self._call(
                "health", None, self.config.recall_timeout_seconds
            )
        except MemoryUnavailable as exc:
            return MemoryHealth(status="down", provider=self.name, detail=str(exc))
        return health

    def close(self) -> None:
        close = getattr(self.plugin, "close", None)
        if callable(close):
            try:
                close()
            except Exception as exc:
                log.warning("memory.close_failed", plugin=self.name, error=describe_exception(exc))


def masked(batch: MemoryWriteBatch) -> MemoryWriteBatch:
    """``batch`` with its entries' text and meta masked by the redaction policy: memory
    (and any index a plugin builds of it) never holds a raw secret."""
    entries = tuple(_masked_entry(e) for e in batch.entries)
    if all(new is old for new, old in zip(entries, batch.entries, strict=True)):
        return batch  # nothing to mask (an exchange's parts were checked): not copied
    return attrs.evolve(batch, entries=entries)


def _masked_entry(entry: MemoryEntry) -> MemoryEntry:
    text = redact_text(entry.text)
    if not entry.meta and text == entry.text:
        return entry
    return attrs.evolve(
        entry, text=text, meta=redact(dict(entry.meta)) if entry.meta else entry.meta
    )


def _within_limits(
    result: MemoryRecallResult, agent_id: str, limits: MemoryLimits, owner: str | None
) -> MemoryRecallResult:
    """Enforce the scope (owner and agent) and the limits on what a plugin returned
    (never trust it to)."""
    kept: list[MemoryItem] = []
    chars = 0
    foreign = 0
    for item in result.items:
        if item.provenance.agent_id != agent_id or not is_own(item.provenance.owner, owner):
            foreign += 1
            continue
        if len(kept) >= limits.max_items or chars + len(item.text) > limits.max_chars:
            break
        kept.append(item)
        chars += len(item.text)
    if foreign:
        log.error(
            "memory.scope_violation", provider=result.provider, agent=agent_id, dropped=foreign
        )
    if len(kept) == len(result.items):
        return result
    return attrs.evolve(result, items=tuple(kept))
