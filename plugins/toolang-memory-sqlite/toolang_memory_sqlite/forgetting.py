"""What a :class:`MemoryForget` request selects, as SQL ``WHERE`` clauses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolang_core.memory import MemoryForget
from toolang_core.memory.kit import filter_clauses, key_chunks
from toolang_memory_sqlite.writing import BY_KEY


def forget_filters(request: MemoryForget) -> Iterator[tuple[str, list[Any]]]:
    """WHERE clauses (with parameters) selecting what ``request`` forgets: the agent's
    entries with the named keys (a clause per ``KEYS_PER_STATEMENT`` keys), else those
    matching its thread, kind and age."""
    if request.keys:
        for chunk in key_chunks(request):
            marks = ", ".join("?" * len(chunk))
            yield (
                f"{BY_KEY} AND key IN ({marks})",
                [request.agent_id, request.owner, request.owner, *chunk],
            )
        return
    where, params = filter_clauses(request)
    yield (
        " AND ".join(["agent_id = ?", "owner IS ?", *where]),
        [request.agent_id, request.owner, *params],
    )
