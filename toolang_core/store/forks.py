"""A thread's history by reference: what a forked or replay thread inherits.

A fork (``toolang threads fork``) and a replay (``toolang turns replay``) start a new
thread whose earlier history is another thread's, up to one of its turns. Nothing is
copied: the new thread keeps one plugin record, :data:`FORK_KIND` under its own id,
saying *which thread* and *before which turn* (``before_seq``) its history continues.
Every backend keeps records, so every backend can fork; the original thread and its
steps are never written.

The prompt reads a thread's history through :func:`thread_history`, which follows the
reference when the thread's own turns run out; :func:`visible_turns` lists the same
history with each turn's request (the views, and picking a turn to fork at).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core.store.types import PastTurn, TurnFilter, TurnRequest

if TYPE_CHECKING:
    from toolang_core.store.protocol import ExecutionStore

FORK_KIND: Final = "toolang.thread.fork"
"""The record kind of a thread's reference to the history it inherits (key: the thread)."""
MAX_DEPTH: Final = 32
"""How many references a history follows (a fork of a fork of …) before it stops."""
MAX_KNOWN: Final = 10_000
"""Threads remembered per store as inheriting nothing (past it, the memory starts over)."""

FirstTurn = tuple[str, int, float]
_plain: weakref.WeakKeyDictionary[Any, set[FirstTurn]] = weakref.WeakKeyDictionary()
"""Per store, threads known to inherit nothing, each as (thread, seq and time of its
first turn). A reference is written before its thread's first request and never after,
so a thread seen with turns and no reference never gets one — unless it is deleted and
made again, with another first turn. Every turn on a short thread reads its history
down to the first turn; this spares each of them a read of the record."""


@attrs.frozen
class ThreadFork:
    """Thread ``thread_id`` inherits ``origin``'s history before turn seq ``before_seq``
    (the turn ``turn_id``, forked at or replayed), made ``at`` (POSIX seconds) as
    ``kind`` (``fork`` or ``replay``)."""

    thread_id: str
    origin: str
    before_seq: int
    turn_id: str
    kind: str = "fork"
    at: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "before_seq": self.before_seq,
            "turn_id": self.turn_id,
            "kind": self.kind,
            "at": self.at,
        }


def fork_of(store: ExecutionStore, thread_id: str) -> ThreadFork | None:
    """The reference ``thread_id`` keeps, if it was made by a fork or a replay."""
    record = store.get_record(FORK_KIND, thread_id)
    if record is None:
        return None
    data = record.data
    return ThreadFork(
        thread_id=thread_id,
        origin=str(data["origin"]),
        before_seq=int(data["before_seq"]),
        turn_id=str(data.get("turn_id", "")),
        kind=str(data.get("kind", "fork")),
        at=float(data.get("at", 0.0)),
    )


def write_fork(store: ExecutionStore, fork: ThreadFork) -> None:
    """Keep ``fork`` for its thread (before the thread's first request is submitted:
    the first prompt on it already reads the inherited history)."""
    store.put_record(FORK_KIND, fork.thread_id, fork.to_json(), now=fork.at)


def thread_history(
    store: ExecutionStore, thread_id: str, *, before_seq: int, limit: int
) -> list[PastTurn]:
    """:meth:`ExecutionStore.thread_history` through fork references: the thread's own
    turns before ``before_seq``, newest first, then — while fewer than ``limit`` — those
    of the thread it was forked from, before the fork point (and so on)."""
    found = store.thread_history(thread_id, before_seq=before_seq, limit=limit)
    depth = 0
    while len(found) < limit and depth < MAX_DEPTH:
        fork = _inherited(store, thread_id, found[-1] if found and not depth else None)
        if fork is None:
            break
        thread_id, before_seq = fork.origin, min(before_seq, fork.before_seq)
        found += store.thread_history(thread_id, before_seq=before_seq, limit=limit - len(found))
        depth += 1
    return found


def _inherited(store: ExecutionStore, thread_id: str, first: PastTurn | None) -> ThreadFork | None:
    """:func:`fork_of`, remembering a thread whose ``first`` turn is known to inherit
    nothing (:data:`_plain`)."""
    if first is None:
        return fork_of(store, thread_id)
    key = (thread_id, first.seq, first.created_at)
    try:
        known = _plain.setdefault(store, set())
    except TypeError:  # a store that cannot be weakly referenced or hashed: always read
        return fork_of(store, thread_id)
    if key in known:
        return None
    fork = fork_of(store, thread_id)
    if fork is None:
        if len(known) >= MAX_KNOWN:
            known.clear()
        known.add(key)
    return fork


def visible_turns(store: ExecutionStore, thread_id: str, *, limit: int = 1000) -> list[TurnRequest]:
    """The turn requests of ``thread_id``'s history, oldest first: those it inherits
    (each still on its own thread) and then its own, at most ``limit`` (the newest)."""
    found: list[TurnRequest] = []
    before: int | None = None
    depth = 0
    while len(found) < limit:
        where = TurnFilter(thread_id=thread_id, limit=limit - len(found), before_seq=before)
        found += store.list_turns(where)
        fork = fork_of(store, thread_id) if depth < MAX_DEPTH else None
        if fork is None:
            break
        thread_id = fork.origin
        before = fork.before_seq if before is None else min(before, fork.before_seq)
        depth += 1
    return list(reversed(found))
