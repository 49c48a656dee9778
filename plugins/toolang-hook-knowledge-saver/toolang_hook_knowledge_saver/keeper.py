"""Where kept knowledge goes: :func:`remember`, the one way out of this plugin.

Every entry goes to this plugin's own table (in batches; ``toolang knowledge list``
reads it; on the store's backend, so every node of a PostgreSQL store shares it) and,
when a memory plugin is configured (``[memory] plugin``), also into the
calling agent's memory through the runtime's memory service — keyed by its content
hash, so the same result is remembered once. A memory write that fails is logged and
never fails the tool call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING

import structlog

from toolang_core import BatchWriter
from toolang_hook_knowledge_saver import keeper_of
from toolang_hook_knowledge_saver.rules import KnowledgeEntry, Rules
from toolang_hook_knowledge_saver.schema import MIGRATIONS, UPSERT
from toolang_hook_knowledge_saver.settings import NAME, KnowledgeSettings

if TYPE_CHECKING:
    from toolang_core import PluginDatabase, RuntimeView

log = structlog.get_logger("toolang.plugins.hook-knowledge-saver")


def settings_of(runtime: RuntimeView) -> KnowledgeSettings:
    """The validated ``[plugins.hook-knowledge-saver]`` section (defaults when absent)."""
    return runtime.settings_for(NAME, KnowledgeSettings)


class Keeper:
    """One runtime's knowledge keeping (kept in ``runtime.plugin_state``)."""

    def __init__(self, runtime: RuntimeView, settings: KnowledgeSettings) -> None:
        self.runtime = runtime
        self.rules = Rules.from_settings(settings)
        self.writer: BatchWriter[KnowledgeEntry] = BatchWriter(
            self._write,
            flush_seconds=settings.flush_seconds,
            batch_size=settings.batch_size,
            name=NAME,
        )

    def database(self) -> PluginDatabase:
        """The plugin's database (created and migrated on first use in this runtime)."""
        return self.runtime.plugin_database(NAME, MIGRATIONS)

    def _write(self, entries: Sequence[KnowledgeEntry]) -> None:
        db = self.database()
        with db.transaction():
            db.executemany(UPSERT, [entry.row() for entry in entries])


def remember(runtime: RuntimeView, entry: KnowledgeEntry) -> Awaitable[None] | None:
    """Keep ``entry``: queue it for the table; return the memory write to await, if any."""
    keeper_of(runtime).writer.add(entry)
    if not runtime.service_available("memory"):
        return None
    return _into_memory(runtime, entry)


async def _into_memory(runtime: RuntimeView, entry: KnowledgeEntry) -> None:
    memory = runtime.memory
    assert memory is not None
    try:
        await memory.save(
            entry.agent,
            f"{entry.tool}({entry.params}) returned: {entry.content}",
            key=f"knowledge:{entry.content_hash}",
            kind="knowledge",
            thread_id=entry.thread_id,
            turn_id=entry.turn_id,
            origin="knowledge",
            owner=entry.owner,
        )
    except Exception as exc:  # the tool call succeeded; memory is an augmentation
        log.warning("knowledge.memory_write_failed", agent=entry.agent, error=str(exc))
