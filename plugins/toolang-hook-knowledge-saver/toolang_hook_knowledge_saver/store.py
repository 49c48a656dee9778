"""Reading kept knowledge back (for the CLI): entries as people and scripts see them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from toolang_hook_knowledge_saver.schema import TABLE

if TYPE_CHECKING:
    from toolang_core import PluginDatabase


@attrs.frozen
class SavedKnowledge:
    """One stored entry, as read back from the table."""

    id: int
    agent: str
    tool: str
    params: str
    content: str
    content_chars: int
    content_hash: str
    thread_id: str
    turn_id: str
    call_id: str
    created_at: float
    last_seen_at: float
    times_seen: int

    @property
    def truncated(self) -> bool:
        return self.content_chars > len(self.content)


_FIELDS = ", ".join(f.name for f in attrs.fields(SavedKnowledge))


def _entry(row: Any) -> SavedKnowledge:
    return SavedKnowledge(*row)


def list_knowledge(db: PluginDatabase, *, agent: str | None, limit: int) -> list[SavedKnowledge]:
    """The newest ``limit`` entries, of one agent or of all."""
    where, params = ("WHERE agent = ? ", [agent]) if agent is not None else ("", [])
    cursor = db.execute(
        f"SELECT {_FIELDS} FROM {TABLE} {where}ORDER BY id DESC LIMIT ?", [*params, limit]
    )
    return [_entry(row) for row in cursor]


def get_knowledge(db: PluginDatabase, entry_id: int) -> SavedKnowledge | None:
    row = db.execute(f"SELECT {_FIELDS} FROM {TABLE} WHERE id = ?", [entry_id]).fetchone()
    return None if row is None else _entry(row)
