"""Entries in and out of a memory plugin's table: a batch's entries checked before
anything is written, a row read back as a :class:`MemoryItem`, and what a forget
request selects besides its scope."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from toolang_core.memory.kit.failures import Failures
from toolang_core.memory.kit.ranking import Ranked, clip
from toolang_core.memory.kit.uses import PendingUses, merged, with_pending
from toolang_core.memory.types import (
    MemoryEntry,
    MemoryForget,
    MemoryItem,
    MemoryListRequest,
    MemoryWriteBatch,
    Provenance,
)
from toolang_core.redaction import redact

ITEM_COLUMNS: Final = (
    "id, agent_id, thread_id, turn_id, origin, key, kind, meta, created_at, updated_at, owner, "
    "use_count, last_used_at"
)
"""The columns :func:`item` reads, in its order (the text follows them)."""
KEYS_PER_STATEMENT: Final = 500
"""Keys of one forget statement (:func:`key_chunks`)."""

Row = tuple[MemoryEntry, str | None]
"""An entry to write, with its meta as JSON."""


def checked(
    batch: MemoryWriteBatch,
    n: int,
    entry: MemoryEntry,
    *,
    max_chars: int,
    failures: Failures,
    refuse: Callable[[str], str | None] | None = None,
) -> Row:
    """Entry ``n`` of ``batch`` with its meta as JSON (secrets masked), refusing what
    cannot be stored before anything is written: text longer than ``max_chars`` (the
    plugin's ``max_entry_chars``), what ``refuse`` finds wrong with the text (the
    database's own limits: it says what, or ``None``), a TTL that is not a positive
    number, meta that is not JSON. A refusal is recorded in ``failures`` and raised as
    ``ValueError`` naming the entry, the batch's agent and the rule."""
    plugin = failures.plugin
    problem = None
    if len(entry.text) > max_chars:
        problem = (
            f"has {len(entry.text)} characters; the limit is "
            f"{max_chars} ([plugins.{plugin}] max_entry_chars)"
        )
    elif refuse is not None and (refused := refuse(entry.text)) is not None:
        problem = refused
    elif entry.ttl_seconds is not None and not (
        math.isfinite(entry.ttl_seconds) and entry.ttl_seconds > 0
    ):
        problem = f"ttl_seconds must be a positive number of seconds, not {entry.ttl_seconds}"
    meta = None
    if problem is None and entry.meta:
        try:
            meta = json.dumps(redact(dict(entry.meta)), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            problem = f"meta must be JSON-serialisable ({exc})"
    if problem is not None:
        where = f"{plugin}: entry {n + 1} of {len(batch.entries)} for agent {batch.agent_id!r}"
        message = f"{where}: {problem}; nothing of this batch was stored"
        failures.record(message)
        raise ValueError(message)
    return entry, meta


def item(
    row: Sequence[Any], body: str, score: float, use: tuple[int, float | None] | None = None
) -> MemoryItem:
    """A :class:`MemoryItem` from a row of :data:`ITEM_COLUMNS` and its (maybe clipped)
    text; ``use``, its ``(use_count, last_used_at)`` when not the row's."""
    row_id, agent, thread, turn, origin, key, kind, meta, created, updated, owner, count, used = row
    if use is not None:
        count, used = use
    return MemoryItem(
        id=str(row_id),
        text=body,
        score=score,
        key=key,
        kind=kind,
        meta=json.loads(meta) if meta else {},
        use_count=int(count),
        last_used_at=used,
        provenance=Provenance(
            agent_id=agent,
            thread_id=thread,
            turn_id=turn,
            origin=origin,
            created_at=created,
            updated_at=updated,
            owner=owner,
        ),
    )


def list_statement(
    request: MemoryListRequest, table: str, scope: tuple[str, Sequence[Any]], live: str, now: float
) -> tuple[str, list[Any]]:
    """The ``SELECT`` (``?`` parameters) and its values listing ``request``'s entries of
    ``table``, newest write first, at most ``request.limit``: :data:`ITEM_COLUMNS` and
    the text (:func:`listed` makes them items), within the plugin's ``scope`` (its clause
    selecting the request's agent and owner, with its values) and its ``live`` clause
    (one parameter: ``now``), narrowed to the request's thread when given."""
    where, params = f"{scope[0]} AND {live}", [*scope[1], now]
    if request.thread_id is not None:
        where += " AND thread_id = ?"
        params.append(request.thread_id)
    sql = (
        f"SELECT {ITEM_COLUMNS}, text FROM {table} WHERE {where} "
        "ORDER BY updated_at DESC, id DESC LIMIT ?"
    )
    return sql, [*params, max(0, request.limit)]


def listed(rows: Iterable[Sequence[Any]], pending: PendingUses) -> tuple[MemoryItem, ...]:
    """Rows of :data:`ITEM_COLUMNS` and the text (a listing's, :func:`list_statement`)
    as items, carrying their stored uses with the ``pending`` ones added."""
    items = tuple(item(row[:-1], row[-1], 0.0) for row in rows)
    return with_pending(items, pending.get(int(i.id) for i in items))


def read_chars(ranked: Sequence[Ranked[Any]]) -> int:
    """How much of the ranked entries' texts to read (``substr(text, 1, ?)``) for
    :func:`ranked_items`: the largest share, and one more for :func:`clip` to see the cut."""
    return max(r.keep_chars for r in ranked) + 1


def ranked_items(
    ranked: Sequence[Ranked[Any]],
    rows: Iterable[Sequence[Any]],
    pending: Mapping[int, tuple[int, float]],
) -> tuple[MemoryItem, ...]:
    """The ``ranked`` entries as items, in rank order, each cut to its share, from their
    ``rows`` in any order (:data:`ITEM_COLUMNS` and the text's first :func:`read_chars`
    characters), carrying their stored uses with the ``pending`` ones added. An entry
    without a row (forgotten since it was ranked) is left out."""
    by_id = {row[0]: row for row in rows}
    items = []
    for r in ranked:
        row = by_id.get(r.candidate[0])
        if row is None:
            continue
        body = clip(row[-1][: r.keep_chars + 1], r.keep_chars)
        use = merged((row[-3], row[-2]), pending.get(row[0]))
        items.append(item(row[:-1], body, round(r.score, 6), use))
    return tuple(items)


def prune_all(prune_batch: Callable[[], int], batch: int) -> int:
    """Call ``prune_batch`` (it deletes up to ``batch`` expired entries, in a transaction
    of its own, and says how many) until it deletes fewer; how many it deleted in all."""
    total = 0
    while True:
        removed = prune_batch()
        total += removed
        if removed < batch:
            return total


def key_chunks(request: MemoryForget) -> Iterator[list[str]]:
    """The distinct keys ``request`` forgets, :data:`KEYS_PER_STATEMENT` at a time."""
    keys = list(dict.fromkeys(request.keys))
    for start in range(0, len(keys), KEYS_PER_STATEMENT):
        yield keys[start : start + KEYS_PER_STATEMENT]


def filter_clauses(request: MemoryForget) -> tuple[list[str], list[Any]]:
    """The ``WHERE`` clauses (``?`` parameters) and their values of what ``request``'s
    filter narrows the scope to: its thread, kind and age (none of them: everything)."""
    where: list[str] = []
    params: list[Any] = []
    for clause, value in (
        ("thread_id = ?", request.thread_id),
        ("kind = ?", request.kind),
        ("created_at < ?", request.before),
    ):
        if value is not None:
            where.append(clause)
            params.append(value)
    return where, params
