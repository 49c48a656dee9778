"""A run's transcript: the events of its child thread, read from its turn's steps.

The task itself is the first event (role ``user``); each model answer is an
``assistant`` event with its text and the names of the tools it asked for; each tool
call is a ``tool`` event with its output (as the model read it) or its error; a
transfer says which agent took over. Steps are stored clipped and with secrets masked,
so the transcript is too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from toolang_core.store.types import StepRecord, TurnRequest
from toolang_core.taskruns.types import (
    TRANSCRIPT_DEFAULT,
    TRANSCRIPT_MAX,
    TranscriptEvent,
)


def normalise_limit(limit: int | None) -> int:
    """``None`` or ≤ 0 → 40; above 200 → 200 (tRPC's ``NormalizeTranscriptLimit``)."""
    if limit is None or limit <= 0:
        return TRANSCRIPT_DEFAULT
    return min(limit, TRANSCRIPT_MAX)


def events(turn: TurnRequest, steps: Sequence[StepRecord]) -> list[TranscriptEvent]:
    """Every event of the run, oldest first."""
    agent = turn.agent or ""
    out = [TranscriptEvent(f"{turn.id}:task", "user", "user", turn.created_at, turn.input)]
    for step in steps:
        event_id = f"{turn.id}:{step.seq}"
        author = str(step.data.get("agent") or agent)
        if step.kind == "model_call":
            response = step.data.get("response") or {}
            out.append(
                TranscriptEvent(
                    event_id,
                    author,
                    "assistant",
                    step.finished_at,
                    content=str(response.get("text") or ""),
                    tool_calls=tuple(
                        str(c["name"]) for c in response.get("tool_calls") or () if c.get("name")
                    ),
                    error=step.error or "",
                )
            )
        elif step.kind == "tool_call" and step.status != "intent":  # shown with its result
            call = step.data.get("call") or {}
            result = step.data.get("result") or {}
            output = result.get("output")
            content = output if isinstance(output, str) else _json(output)
            out.append(
                TranscriptEvent(
                    event_id,
                    author,
                    "tool",
                    step.finished_at,
                    content="" if output is None else content,
                    tool_id=str(call.get("id") or ""),
                    tool_name=str(call.get("name") or ""),
                    error=str(result.get("error") or ""),
                )
            )
        elif step.kind == "transfer":
            out.append(
                TranscriptEvent(
                    event_id,
                    str(step.data.get("from") or author),
                    "assistant",
                    step.finished_at,
                    content=f"(transferred to {step.data.get('to')})",
                )
            )
    return out


def recent(
    turn: TurnRequest, steps: Sequence[StepRecord], limit: int | None
) -> list[TranscriptEvent]:
    """The last ``limit`` events (normalised: default 40, at most 200)."""
    every = events(turn, steps)
    return every[-normalise_limit(limit) :]


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
