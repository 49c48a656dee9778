"""The memory-plugin contract: what the runtime asks a memory plugin and what it gets.

The runtime decides when memory is used; the plugin stores and recalls. A plugin
returns structured data only — it never writes prompt text (the runtime renders what
it recalls), never schedules work and never publishes bus events.

Every call is scoped by ``owner`` and ``agent_id``: an agent only ever sees entries
written under its own id *for the same owner* (the person or account whose turn it was;
``None`` is the operator's own memory, an owner of its own). ``thread_id`` narrows
further when given. Entries with a ``key`` are
upserted (a second write with the same agent and key replaces the first) and can be
forgotten by key.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any, Literal, Protocol, runtime_checkable

import attrs

Origin = str
"""What produced a request or entry: ``turn`` (automatic after a turn), ``tool``
(``memory_agent_*``), ``knowledge`` (the KnowledgeSaver stage), ``cli`` …"""


@attrs.frozen
class MemoryLimits:
    """How much a recall may return: at most ``max_items`` items whose texts add up to
    at most ``max_chars`` characters (the best-scored first)."""

    max_items: int = 8
    max_chars: int = 4000


@attrs.frozen
class Provenance:
    """Where a recalled item came from."""

    agent_id: str
    thread_id: str | None = None
    turn_id: str | None = None
    origin: Origin = ""
    created_at: float = 0.0
    updated_at: float = 0.0
    owner: str | None = None


@attrs.frozen
class MemoryItem:
    """One recalled entry. ``score`` is higher for better matches (plugin-specific
    scale, comparable within one result); ``key`` is set when the entry has one.

    ``use_count`` is how many recalls have returned the entry, this one included, and
    ``last_used_at`` the time (POSIX) of the latest (``None``: never recalled). A plugin
    that does not track uses leaves them ``0`` and ``None`` (both added in 0.2; a plugin
    written before keeps working). A plugin that tracks them may use them in ranking
    and in choosing what to prune; the SQLite plugin's rules are in
    ``plugins/toolang-memory-sqlite/README.md``."""

    id: str
    text: str
    score: float
    provenance: Provenance
    key: str | None = None
    kind: str = "note"
    meta: Mapping[str, Any] = attrs.field(factory=dict)
    use_count: int = 0
    last_used_at: float | None = None


@attrs.frozen
class MemoryFact:
    """A short statement the plugin holds as true for the agent (e.g. a saved key)."""

    text: str
    key: str | None = None
    meta: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class MemorySummary:
    """A condensed account of earlier conversation (a plugin may keep them)."""

    text: str
    thread_id: str | None = None
    meta: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class MemoryRecallRequest:
    """Ask for what an agent remembers that bears on ``query_text``.

    ``agent_uri`` names the agent globally (``toolang://<runtime home>/agents/<name>``),
    ``agent_id`` is the scope key (the agent's name). ``thread_id`` set: entries of
    that thread only. ``execution_strategy`` tells the plugin what the runtime is doing
    (``prompt`` before a turn's prompt, ``search`` for an explicit lookup) so it can
    choose how hard to try.
    """

    agent_uri: str
    agent_id: str
    query_text: str
    thread_id: str | None = None
    turn_id: str | None = None
    origin: Origin = "turn"
    sender: str | None = None
    execution_strategy: Literal["prompt", "search"] = "prompt"
    limits: MemoryLimits = MemoryLimits()
    meta: Mapping[str, Any] = attrs.field(factory=dict)
    owner: str | None = None
    """Whose memory: entries written for another owner are never recalled."""


@attrs.frozen
class MemoryRecallResult:
    """What a recall found, best first, and what the plugin wants to report about it."""

    items: tuple[MemoryItem, ...] = ()
    facts: tuple[MemoryFact, ...] = ()
    summaries: tuple[MemorySummary, ...] = ()
    provider: str = ""
    diagnostics: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class MemoryEntry:
    """One thing to remember. ``key`` makes it addressable (upsert, forget);
    ``ttl_seconds`` makes it expire."""

    text: str
    key: str | None = None
    kind: str = "note"
    ttl_seconds: float | None = None
    meta: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class MemoryWriteBatch:
    """Entries to store for one agent (and, when given, one thread and turn)."""

    agent_uri: str
    agent_id: str
    entries: tuple[MemoryEntry, ...]
    thread_id: str | None = None
    turn_id: str | None = None
    origin: Origin = "turn"
    meta: Mapping[str, Any] = attrs.field(factory=dict)
    owner: str | None = None
    """Whose memory the entries are (a key is unique per owner and agent)."""


@attrs.frozen
class MemoryWriteResult:
    """How many entries were stored (inserted or replaced)."""

    written: int
    provider: str = ""
    diagnostics: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class MemoryForget:
    """Which entries of ``owner``'s ``agent_id`` to delete: those with one of ``keys``, or
    (no keys) every entry matching the filter — ``thread_id``, ``kind``, ``before``
    (created earlier than this POSIX time). An empty filter forgets everything of the
    owner's agent."""

    agent_id: str
    keys: tuple[str, ...] = ()
    thread_id: str | None = None
    kind: str | None = None
    before: float | None = None
    owner: str | None = None
    """Whose entries: another owner's are never forgotten."""


@attrs.frozen
class MemoryForgetResult:
    forgotten: int
    provider: str = ""


@attrs.frozen
class MemoryListRequest:
    """Browse an agent's entries, newest first (``toolang memory list``)."""

    agent_id: str
    thread_id: str | None = None
    limit: int = 50
    owner: str | None = None


@attrs.frozen
class MemoryHealth:
    """How the plugin is doing. ``status`` ``ok``, ``degraded`` (works, with problems
    worth a look) or ``down``; ``entries`` and ``size_bytes`` when known; ``last_error``
    is the most recent failure the plugin saw, with its time."""

    status: Literal["ok", "degraded", "down"]
    provider: str
    detail: str = ""
    entries: int | None = None
    size_bytes: int | None = None
    last_error: str | None = None
    last_error_at: float | None = None
    meta: Mapping[str, Any] = attrs.field(factory=dict)


@runtime_checkable
class MemoryPlugin(Protocol):
    """What a ``toolang_register_memory`` factory returns.

    Each method may be synchronous or ``async``. Synchronous methods run in a worker
    thread, so a slow disk never stalls the runtime; they must be thread-safe.
    """

    def recall(
        self, request: MemoryRecallRequest
    ) -> MemoryRecallResult | Awaitable[MemoryRecallResult]: ...

    def remember(
        self, batch: MemoryWriteBatch
    ) -> MemoryWriteResult | Awaitable[MemoryWriteResult]: ...

    def forget(
        self, request: MemoryForget
    ) -> MemoryForgetResult | Awaitable[MemoryForgetResult]: ...

    def list_entries(
        self, request: MemoryListRequest
    ) -> tuple[MemoryItem, ...] | Awaitable[tuple[MemoryItem, ...]]: ...

    def health(self) -> MemoryHealth | Awaitable[MemoryHealth]: ...

    def close(self) -> None: ...
