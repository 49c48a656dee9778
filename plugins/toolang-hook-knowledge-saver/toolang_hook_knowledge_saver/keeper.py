"""Where kept knowledge goes: :func:`remember`, the one way out of this plugin.

The runtime has no memory service yet (memory plugins register through
``toolang_register_memory``; a later change wires them in). Until then entries go to
this plugin's own table, in batches. When the runtime offers the memory plugin,
:func:`remember` is the only function to change: hand the entry to the memory
plugin's ``remember`` instead of (or as well as) the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolang_core import BatchWriter
from toolang_hook_knowledge_saver import keeper_of
from toolang_hook_knowledge_saver.rules import KnowledgeEntry, Rules
from toolang_hook_knowledge_saver.schema import MIGRATIONS, UPSERT
from toolang_hook_knowledge_saver.settings import NAME, KnowledgeSettings

if TYPE_CHECKING:
    from sqlite_utils import Database

    from toolang_core import Runtime


def settings_of(runtime: Runtime) -> KnowledgeSettings:
    """The validated ``[plugins.hook-knowledge-saver]`` section (defaults when absent)."""
    found = runtime.settings.get(NAME)
    return found if isinstance(found, KnowledgeSettings) else KnowledgeSettings()


class Keeper:
    """One runtime's knowledge keeping (kept in ``runtime.plugin_state``)."""

    def __init__(self, runtime: Runtime, settings: KnowledgeSettings) -> None:
        self.runtime = runtime
        self.rules = Rules.from_settings(settings)
        self.writer: BatchWriter[KnowledgeEntry] = BatchWriter(
            self._write,
            flush_seconds=settings.flush_seconds,
            batch_size=settings.batch_size,
            name=NAME,
        )

    def database(self) -> Database:
        """The plugin's database (created and migrated on first use in this runtime)."""
        return self.runtime.plugin_database(NAME, MIGRATIONS)

    def _write(self, entries: Sequence[KnowledgeEntry]) -> None:
        db = self.database()
        with db.atomic():
            db.conn.executemany(UPSERT, [entry.row() for entry in entries])


def remember(runtime: Runtime, entry: KnowledgeEntry) -> None:
    """Keep ``entry`` — today in this plugin's table; later through the memory plugin."""
    keeper_of(runtime).writer.add(entry)
