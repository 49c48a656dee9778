"""What may be done at once in the event loop's thread, and what goes to the database
thread (:meth:`~toolang_memory_sqlite.memory.SQLiteMemory._at_once`, :mod:`.group`).

A recall's work is bounded (``ranked_matches``) and a WAL reader never waits, so a
recall is done at once unless it finds the file locked (:class:`Locked`: another
process recovering it after a crash). A write waits for the disk at each commit with
``synchronous = "full"`` or ``"extra"``, and a long text takes long to index: those go
to the thread (:func:`writes_at_once`). So do writes whose cap (``max_entries``)
would delete more than :data:`AT_ONCE_DELETES` entries beside those they write (a cap
lowered, or set on a full memory), or look for them longer than
:data:`~.uses.AT_ONCE_STEPS` allows: found out as they write (:class:`~.uses.LongCap`),
they are rolled back and handed over.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from toolang_core.memory import kit

AT_ONCE_CHARS: Final = 32_768
"""A group's writes of more text than this go to the database thread, not done at once."""
AT_ONCE_DELETES: Final = 32
"""Entries a group's writes done at once may delete past ``max_entries``, beside as
many as they write (each about 0.1 ms: its text is read back to take it out of the
full-text index)."""


class Locked(Exception):
    """A recall done at once found the file locked (another process recovering it): it
    is left to the database thread, which waits. No failure: health does not hear of it."""


def writes_at_once(commits_wait_for_disk: bool, batches: Sequence[list[kit.Row]]) -> bool:
    """Whether writes of ``batches`` (their checked rows) may be done in the event
    loop's thread: no disk wait at commit, at most :data:`AT_ONCE_CHARS` of text (and,
    found out as they write, at most :data:`AT_ONCE_DELETES` deleted by a cap)."""
    return (
        not commits_wait_for_disk
        and sum(len(entry.text) for rows in batches for entry, _ in rows) <= AT_ONCE_CHARS
    )
