"""A stored turn request seen as an A2A task (the turn id is the task id)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from a2a.types.a2a_pb2 import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)

from toolang_core import TurnRequest, TurnStatus, is_typed

THREAD_PREFIX = "a2a:"

STATES: dict[TurnStatus, int] = {
    TurnStatus.QUEUED: TaskState.TASK_STATE_SUBMITTED,
    TurnStatus.RUNNING: TaskState.TASK_STATE_WORKING,
    TurnStatus.CANCELING: TaskState.TASK_STATE_WORKING,
    # A turn parked on an approval waits for a person in toolang: to the caller that
    # is input it cannot give itself, so the spec's input-required.
    TurnStatus.AWAITING_APPROVAL: TaskState.TASK_STATE_INPUT_REQUIRED,
    TurnStatus.COMPLETED: TaskState.TASK_STATE_COMPLETED,
    TurnStatus.STEERED: TaskState.TASK_STATE_COMPLETED,
    TurnStatus.FAILED: TaskState.TASK_STATE_FAILED,
    TurnStatus.CANCELED: TaskState.TASK_STATE_CANCELED,
    TurnStatus.DROPPED: TaskState.TASK_STATE_REJECTED,
}

# The states after which a stream ends: terminal, or waiting on someone else.
FINAL = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
        TaskState.TASK_STATE_INPUT_REQUIRED,
    }
)


def turn_id_for(owner: str, message_id: str) -> str:
    """A stable turn id for one caller's message: a retried send is the same task."""
    digest = hashlib.sha256(f"{owner}\0{message_id}".encode()).hexdigest()[:32]
    return f"a2a-{digest}"


SCHEMA_MEDIA_TYPE = "application/schema+json"
"""A message's data part of this media type is the JSON Schema its answer must match
(a typed answer, docs/typed-answers.md); the answer comes back as a data part."""
SCHEMA_META_KEY = "toolang.output_schema"
"""Message metadata holding the same schema, for clients that prefer metadata."""

TASK_RUN_FLAG = "toolang.task_run"
"""Message metadata asking for durable tracking: the work becomes a task run (listed by
``toolang tasks runs``) instead of a chat turn."""


def _run_metadata(turn: TurnRequest) -> dict[str, object]:
    run = turn.meta.get("taskrun")
    found = run.get("metadata") if isinstance(run, dict) else None
    return found if isinstance(found, dict) else {}


def a2a_context(turn: TurnRequest) -> str | None:
    """The A2A contextId of a turn that arrived over A2A (chat turn or task run), or
    ``None`` for a turn that did not."""
    if turn.channel == "a2a" and turn.thread_id.startswith(THREAD_PREFIX):
        return turn.thread_id.removeprefix(THREAD_PREFIX)
    context = _run_metadata(turn).get("a2a_context")
    return str(context) if context else None


def context_of(turn: TurnRequest) -> str:
    return a2a_context(turn) or turn.thread_id.removeprefix(THREAD_PREFIX)


def _text(role: int, text: str, turn: TurnRequest, message_id: str) -> Message:
    return Message(
        message_id=message_id,
        context_id=context_of(turn),
        task_id=turn.id,
        role=role,  # type: ignore[arg-type]
        parts=[Part(text=text)],
    )


def status_text(turn: TurnRequest, question: str | None = None) -> str | None:
    """The status message's text; ``question`` is what the turn asks the caller when it
    waits on a question (``ask_person``) rather than on an approval."""
    if turn.status is TurnStatus.AWAITING_APPROVAL:
        return question or "waiting for a person to approve a tool call in toolang"
    if turn.status in (TurnStatus.FAILED, TurnStatus.CANCELED, TurnStatus.DROPPED):
        return turn.error or turn.outcome or turn.status.value
    if turn.status is TurnStatus.COMPLETED:
        return turn.output or ""
    return None


def status_of(turn: TurnRequest, question: str | None = None) -> TaskStatus:
    status = TaskStatus(state=STATES[turn.status])  # type: ignore[arg-type]
    text = status_text(turn, question)
    if text is not None:
        status.message.CopyFrom(_text(Role.ROLE_AGENT, text, turn, f"{turn.id}-status"))
    status.timestamp.FromMilliseconds(int(turn.updated_at * 1000))
    return status


def answer_part(turn: TurnRequest, agents: Any = None) -> Part:
    """A completed turn's answer: a data part (``application/json``) holding a typed
    answer's value (``agents``: the runtime's, to know an agent's own schema), else a
    text part."""
    output = turn.output or ""
    if is_typed(turn, agents):
        from a2a.helpers.proto_helpers import new_data_part

        try:
            value = json.loads(output)
        except json.JSONDecodeError:  # e.g. masked on the way in: the text as stored
            return Part(text=output)
        return new_data_part(value, "application/json")
    return Part(text=output)


def artifact_of(turn: TurnRequest, agents: Any = None) -> Artifact | None:
    if turn.status is not TurnStatus.COMPLETED:
        return None
    return Artifact(
        artifact_id=f"{turn.id}-answer", name="answer", parts=[answer_part(turn, agents)]
    )


def task_of(
    turn: TurnRequest, *, history: bool = True, agents: Any = None, question: str | None = None
) -> Task:
    """``turn`` as an A2A task: a completed one's answer is its artifact (a typed answer
    as a data part; its status message keeps the answer's text); a turn waiting on a
    person's answer shows ``question``."""
    task = Task(id=turn.id, context_id=context_of(turn), status=status_of(turn, question))
    artifact = artifact_of(turn, agents)
    if artifact is not None:
        task.artifacts.append(artifact)
    if history:
        message_id = str(
            turn.meta.get("a2a_message_id")
            or _run_metadata(turn).get("a2a_message_id")
            or f"{turn.id}-input"
        )
        task.history.append(_text(Role.ROLE_USER, turn.input, turn, message_id))
    return task
