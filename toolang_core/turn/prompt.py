"""Building an agent's prompt: instruction, runtime context, notes, memory, history."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolang_core.models.types import Message
from toolang_core.redaction import composed_text
from toolang_core.store.forks import thread_history
from toolang_core.store.types import PastTurn, TurnRequest, TurnStatus
from toolang_core.taskruns.merge import notes_of
from toolang_core.tools.types import ToolResult

if TYPE_CHECKING:
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.attachments.types import Attachment
    from toolang_core.store.protocol import ExecutionStore


def system_message(
    agent: AgentDefinition,
    turn: TurnRequest,
    *,
    notes: Sequence[str] = (),
    memory: Sequence[str] = (),
    summary: str | None = None,
) -> Message:
    """The instruction, then runtime context, then notes and recalled memory if any,
    then the summary of the thread's compacted turns (:mod:`toolang_core.turn.compaction`)
    if it has one: the last thing before the recent turns.

    It is a new text every turn (the time, the recalled memory), made of parts that
    mostly repeat: the redaction policy checks the parts (each remembered by its cache)
    rather than scanning the whole prompt again in each model call's step."""
    instruction = agent.instruction.strip() or f"You are the agent {agent.name}."
    where = f"- thread: {turn.thread_id} (source {turn.source}" + (
        f", channel {turn.channel})" if turn.channel else ")"
    )
    who = f"- sender: {turn.sender}"
    context = [f"- time: {_local_time()}", f"- agent: {agent.name}"]
    parts = [instruction, "## Context\n" + "\n".join([*context, where, who])]
    if notes:
        parts.append("## Notes\n" + "\n".join(f"- {n}" for n in notes))
    if memory:
        parts.append("## Remembered\n" + "\n".join(f"- {m}" for m in memory))
    if summary:
        parts.append(SUMMARY_HEADING + summary)
    text = "\n\n".join(parts)
    # The time is the runtime's own; everything else is checked as it goes in (the
    # summary was masked when it was stored).
    checked = (
        instruction,
        agent.name,
        where,
        who,
        *notes,
        *memory,
        *((summary,) if summary else ()),
    )
    return Message(role="system", content=composed_text(text, checked))


SUMMARY_HEADING = "## Earlier in this thread (summary)\n"
"""What introduces a compacted thread's summary in the system message."""


_CLOCK: list[tuple[int, str]] = [(-1, "")]
"""The last second :func:`_local_time` wrote out, and how."""


def _local_time() -> str:
    """Now as the prompt shows it, written out once per second (every turn asks)."""
    second = int(time.time())
    shown, text = _CLOCK[0]
    if shown != second:
        text = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(second))
        _CLOCK[0] = (second, text)
    return text


def history(store: ExecutionStore, turn: TurnRequest, limit: int) -> list[Message]:
    """The thread's earlier exchanges, oldest first, at most ``limit`` turns.

    Only what was said — each request's input and its answer — never the tool traffic
    of earlier turns, nor the turns of task runs spawned from the thread: those live on
    their own threads, and each finished run is merged back as one short note in its
    place in time (:mod:`toolang_core.taskruns.merge`).
    """
    if limit <= 0:
        return []
    # A forked or replay thread's history goes on in the thread it came from.
    earlier = thread_history(store, turn.thread_id, before_seq=turn.seq, limit=limit)
    entries: list[tuple[float, list[Message]]] = []
    for past in earlier:
        said = exchange(past)
        if said:
            entries.append((past.created_at, said))
    window = earlier[-1].created_at if len(earlier) >= limit else float("-inf")
    for note in notes_of(store, turn.thread_id):
        if note.finished_at >= window:
            entries.append((note.finished_at, [Message(role="assistant", content=note.text())]))
    entries.sort(key=lambda entry: entry[0])
    return [message for _, said in entries for message in said]


def exchange(past: PastTurn) -> list[Message]:
    """What was said in one earlier turn, as messages (none for a turn still open)."""
    if past.status is TurnStatus.COMPLETED:
        return [
            Message(role="user", content=past.input),
            Message(role="assistant", content=past.output or ""),
        ]
    if past.status in (TurnStatus.FAILED, TurnStatus.CANCELED):
        return [
            Message(role="user", content=past.input),
            Message(role="assistant", content=f"(no answer: {past.outcome or past.status.value})"),
        ]
    if past.status is TurnStatus.STEERED:
        return [Message(role="user", content=past.input)]
    return []


def tool_message(
    call_id: str,
    name: str,
    result: ToolResult,
    files: tuple[Attachment, ...] = (),
    missing: tuple[str, ...] = (),
) -> Message:
    """A tool result as the model reads it: JSON with ok/output or ok/error, and the
    references of the files it gave back (``attachments``). ``files`` are those files
    for the model; ``missing`` a text reference of each that cannot be given."""
    if result.ok:
        payload: dict[str, object] = {"ok": True, "output": result.output}
    else:
        payload = {"ok": False, "error": result.error, "error_type": result.error_type}
    if result.attachments:
        payload["attachments"] = [ref.to_json() for ref in result.attachments]
    content = json.dumps(payload, ensure_ascii=False, default=str)
    return Message(
        role="tool",
        content="\n".join([content, *missing]),
        tool_call_id=call_id,
        name=name,
        attachments=files,
    )
