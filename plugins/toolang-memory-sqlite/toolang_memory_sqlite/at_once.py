"""What may be done at once in the event loop's thread, and what goes to the database
thread (:meth:`~toolang_memory_sqlite.memory.SQLiteMemory._at_once`, :mod:`.group`).

A recall's work is bounded (``ranked_matches``) and a WAL reader never waits, so a
recall is done at once unless it finds the file locked (:class:`Locked`: another
process recovering it after a crash). A write waits for the disk at each commit with
``synchronous = "full"`` or ``"extra"``, and a cap on the entries (``max_entries``)
or a long text may take long: those go to the thread (:func:`writes_at_once`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from toolang_core.memory import kit
from toolang_memory_sqlite.settings import MemorySQLiteSettings

AT_ONCE_CHARS: Final = 32_768
"""A group's writes of more text than this go to the database thread, not done at once."""


class Locked(Exception):
    """A recall done at once found the file locked (another process recovering it): it
    is left to the database thread, which waits. No failure: health does not hear of it."""


def writes_at_once(
    settings: MemorySQLiteSettings,
    commits_wait_for_disk: bool,
    batches: Sequence[list[kit.Row]],
) -> bool:
    """Whether writes of ``batches`` (their checked rows) may be done in the event
    loop's thread: no cap to keep, no disk wait at commit, at most
    :data:`AT_ONCE_CHARS` of text."""
    return (
        settings.max_entries is None
        and not commits_wait_for_disk
        and sum(len(entry.text) for rows in batches for entry, _ in rows) <= AT_ONCE_CHARS
    )
