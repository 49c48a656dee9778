"""Building an agent's prompt: instruction, runtime context, notes, memory, history."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolang_core.models.types import Message
from toolang_core.store.types import TurnFilter, TurnRequest, TurnStatus
from toolang_core.tools.types import ToolResult

if TYPE_CHECKING:
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.store.protocol import ExecutionStore


def system_message(
    agent: AgentDefinition,
    turn: TurnRequest,
    *,
    notes: Sequence[str] = (),
    memory: Sequence[str] = (),
) -> Message:
    """The instruction, then runtime context, then notes and recalled memory if any."""
    parts = [agent.instruction.strip() or f"You are the agent {agent.name}."]
    context = [
        f"- time: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
        f"- agent: {agent.name}",
        f"- thread: {turn.thread_id} (source {turn.source}"
        + (f", channel {turn.channel}" if turn.channel else "")
        + ")",
        f"- sender: {turn.sender}",
    ]
    parts.append("## Context\n" + "\n".join(context))
    if notes:
        parts.append("## Notes\n" + "\n".join(f"- {n}" for n in notes))
    if memory:
        parts.append("## Remembered\n" + "\n".join(f"- {m}" for m in memory))
    return Message(role="system", content="\n\n".join(parts))


def history(store: ExecutionStore, turn: TurnRequest, limit: int) -> list[Message]:
    """The thread's earlier exchanges, oldest first, at most ``limit`` turns.

    Only what was said — each request's input and its answer — never the tool traffic
    of earlier turns.
    """
    if limit <= 0:
        return []
    earlier = [
        t
        for t in store.list_turns(
            TurnFilter(thread_id=turn.thread_id, before_seq=turn.seq, limit=limit)
        )
    ]
    messages: list[Message] = []
    for past in reversed(earlier):
        if past.status is TurnStatus.COMPLETED:
            messages.append(Message(role="user", content=past.input))
            messages.append(Message(role="assistant", content=past.output or ""))
        elif past.status in (TurnStatus.FAILED, TurnStatus.CANCELED):
            messages.append(Message(role="user", content=past.input))
            messages.append(
                Message(
                    role="assistant", content=f"(no answer: {past.outcome or past.status.value})"
                )
            )
        elif past.status is TurnStatus.STEERED:
            messages.append(Message(role="user", content=past.input))
    return messages


def tool_message(call_id: str, name: str, result: ToolResult) -> Message:
    """A tool result as the model reads it: JSON with ok/output or ok/error."""
    if result.ok:
        payload: dict[str, object] = {"ok": True, "output": result.output}
    else:
        payload = {"ok": False, "error": result.error, "error_type": result.error_type}
    return Message(
        role="tool",
        content=json.dumps(payload, ensure_ascii=False, default=str),
        tool_call_id=call_id,
        name=name,
    )
