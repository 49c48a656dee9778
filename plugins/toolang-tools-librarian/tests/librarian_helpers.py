"""Running real turns through the whole tool chain, and reading their tool steps."""

from __future__ import annotations

import asyncio
from typing import Any

from toolang_core.store.types import NewTurnRequest, TurnStatus


def run_turn(runtime: Any, text: str = "go", *, owner: str = "alice", thread: str = "") -> str:
    """Submit one chat turn of ``owner``, serve until idle, return the turn id."""
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(
        NewTurnRequest(source="chat", thread_id=thread or f"cli:{owner}", input=text, owner=owner)
    ).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED, inbox.get(turn_id)
    return turn_id


def tool_results(runtime: Any, turn_id: str) -> list[dict[str, Any]]:
    """The result of each tool call of the turn, in order."""
    store = runtime.open_store()
    return [s.data["result"] for s in store.steps(turn_id) if "result" in s.data]
