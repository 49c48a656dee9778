"""What a :class:`MemoryForget` request selects, as SQL ``WHERE`` clauses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from toolang_core.memory import MemoryForget
from toolang_memory_sqlite.writing import BY_KEY

KEYS_PER_STATEMENT: Final = 500


def forget_filters(request: MemoryForget) -> Iterator[tuple[str, list[Any]]]:
    """WHERE clauses (with parameters) selecting what ``request`` forgets: the agent's
    entries with the named keys (a clause per :data:`KEYS_PER_STATEMENT` keys), else
    those matching its thread, kind and age."""
    if request.keys:
        keys = list(dict.fromkeys(request.keys))
        for start in range(0, len(keys), KEYS_PER_STATEMENT):
            chunk = keys[start : start + KEYS_PER_STATEMENT]
            marks = ", ".join("?" * len(chunk))
            yield (
                f"{BY_KEY} AND key IN ({marks})",
                [request.agent_id, request.owner, request.owner, *chunk],
            )
        return
    where: list[str] = ["agent_id = ?", "owner IS ?"]
    params: list[Any] = [request.agent_id, request.owner]
    for clause, value in (
        ("thread_id = ?", request.thread_id),
        ("kind = ?", request.kind),
        ("created_at < ?", request.before),
    ):
        if value is not None:
            where.append(clause)
            params.append(value)
    yield " AND ".join(where), params
