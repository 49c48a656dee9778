"""Set-up shared by the tests of a turn parked until a person decides: approvals
(tests/test_approvals.py, tests/test_in_doubt.py) and questions
(tests/test_questions.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from toolang_core.store.types import NewTurnRequest, TurnStatus


def create_request(book, turn_id: str, *, call_id: str = "c1", **fields: Any):
    """``book.create`` for a ``touch`` call of ``turn_id`` asked on thread ``cli:a`` with
    no timeout, ``fields`` overriding any of that."""
    made: dict[str, Any] = {
        "tool": "touch",
        "params": {},
        "thread_id": "cli:a",
        "agent": "assistant",
        "requester": None,
        "prompt": "?",
        "timeout_seconds": None,
        **fields,
    }
    return book.create(turn_id=turn_id, call_id=call_id, **made)


async def only_pending(book, serving: asyncio.Task[Any], *, deadline: float = 30):
    """The one pending request of ``book`` once there is one (while ``serving`` runs)."""
    end = time.monotonic() + deadline
    while not (pending := book.list("pending")):
        assert time.monotonic() < end and not serving.done(), "nobody was asked"
        await asyncio.sleep(0.02)
    (approval,) = pending
    return approval


def submit(runtime, words: str = "go", *, owner: str | None = None) -> str:
    """Submit ``words`` as a chat turn on thread ``cli:a``; return its id."""
    inbox = runtime.open_inbox()
    try:
        request = NewTurnRequest(source="chat", thread_id="cli:a", input=words, owner=owner)
        return inbox.submit(request).id
    finally:
        inbox.store.close()


async def serve_until_decided(
    runtime,
    turn_id: str,
    book_of: Callable[[Any], Any],
    waiting: Callable[[Any, str], Any],
    act: Callable[[Any, Any], None] | None,
    *,
    deadline: float,
):
    """Serve ``runtime`` until ``turn_id`` ends; return the turn. When it awaits a
    person and ``waiting(book, turn_id)`` names what it waits on, call ``act(book,
    that)`` once; ``book_of(store)`` makes the book."""
    inbox = runtime.open_inbox()
    stop = asyncio.Event()
    serving = asyncio.create_task(runtime.serve(stop, sources=()))
    book = book_of(inbox.store)
    try:
        end = time.monotonic() + deadline
        acted = False
        while time.monotonic() < end:
            turn = inbox.get(turn_id)
            if turn.status.is_terminal:
                return turn
            if turn.status is TurnStatus.AWAITING_APPROVAL and act and not acted:
                found = waiting(book, turn_id)
                if found is not None:
                    act(book, found)
                    acted = True
            await asyncio.sleep(0.02)
        raise AssertionError(f"turn still {inbox.get(turn_id).status} after {deadline} s")
    finally:
        stop.set()
        await serving
        inbox.store.close()
