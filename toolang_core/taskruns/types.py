"""The values of the task-run control plane: statuses, the run view, requests, filters.

A task run is a turn request of source ``task`` on its own child thread
``task:<run id>``; the run's id is that request's id. :class:`TaskRun` is the view the
controller builds from the request, its steps and its final record. The JSON shape
(:meth:`TaskRun.to_json`) follows tRPC-Agent-Go's ``taskrun.Run`` with toolang's
words: ``owner`` for ``owner_user_id``, ``parent_thread_id`` / ``child_thread_id`` for
the parent and child *session* ids (see docs/delegation.md for the whole mapping).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar, Final

import attrs

from toolang_core.errors import ToolangError
from toolang_core.spend import SpendBudget
from toolang_core.store.types import GroupPolicy
from toolang_core.store.usage import TASK_THREAD_PREFIX, Usage

SUMMARY_CHARS: Final = 240
"""A run's ``summary``: the first 240 characters of its output (or its error)."""

RESULT_CHARS: Final = 4000
"""A run's ``result``: the first 4000 characters of its final answer."""

TRANSCRIPT_DEFAULT: Final = 40
TRANSCRIPT_MAX: Final = 200

THREAD_PREFIX: Final = TASK_THREAD_PREFIX
SOURCE: Final = "task"
GROUP: Final = GroupPolicy(priority=20, strategy="coalesce", max_running=4)
"""The admission defaults of the ``task`` thread group, which task runs submit to (and
toolang-source-task's tasks too): background work, at most four of its turns at once."""


class TaskRunStatus(enum.StrEnum):
    """The seven statuses of a task run (tRPC-Agent-Go's, with the same meanings)."""

    QUEUED = "queued"
    """Accepted, not started yet (waiting for the scheduler to admit it)."""
    RUNNING = "running"
    """Its agent turn is executing (also while a tool call waits for a person)."""
    FINALIZING = "finalizing"
    """The turn ended; finalizer hooks are attaching metadata before the result counts."""
    CANCELING = "canceling"
    """Cancel was asked; the turn has not stopped yet."""
    COMPLETED = "completed"
    FAILED = "failed"
    """The agent failed, or the run timed out (``outcome`` says ``timeout``)."""
    CANCELED = "canceled"

    @property
    def is_terminal(self) -> bool:
        return self in (TaskRunStatus.COMPLETED, TaskRunStatus.FAILED, TaskRunStatus.CANCELED)


def is_terminal(status: str) -> bool:
    """Whether ``status`` is terminal; an unknown string is not (as in tRPC)."""
    try:
        return TaskRunStatus(status).is_terminal
    except ValueError:
        return False


class TaskRunError(ToolangError):
    """A task-run request was refused: a missing field, a limit, an unknown agent."""

    exit_code: ClassVar[int] = 2


class TaskRunNotFound(TaskRunError):
    """No task run has this id — or it belongs to another owner, which looks the same."""

    exit_code: ClassVar[int] = 6

    def __init__(self, message: str = "taskrun: run not found") -> None:
        super().__init__(message)


class TaskRunExists(TaskRunError):
    """A run with the caller-chosen id was already spawned."""

    def __init__(self, message: str = "taskrun: run already exists") -> None:
        super().__init__(message)


def clip(text: str | None, limit: int) -> str:
    """``text`` trimmed and cut to ``limit`` characters (code points, like Go's runes)."""
    return (text or "").strip()[:limit]


def iso(moment: float | None) -> str | None:
    if moment is None:
        return None
    return datetime.fromtimestamp(moment, UTC).isoformat().replace("+00:00", "Z")


@attrs.frozen
class TaskRunProgress:
    """A cheap snapshot of what the run's turn did so far, from its recorded steps.

    ``event_count`` counts steps (model calls, tool calls, transfers…);
    ``tool_call_count`` the tool calls the model asked for; ``tool_result_count`` the
    tool calls that ran (or were refused) and returned a result; the token counts sum
    the model calls' reported usage.
    """

    event_count: int = 0
    tool_call_count: int = 0
    tool_result_count: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    last_event_at: float | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            k: v
            for k, v in attrs.asdict(self).items()
            if k != "last_event_at" and v  # omitempty, as tRPC
        }
        if self.last_event_at is not None:
            data["last_event_at"] = iso(self.last_event_at)
        return data


@attrs.frozen
class ApprovalWait:
    """A tool call of the run waiting for a person's decision (``toolang approvals``).

    ``attempt`` counts the approval requests the run has made, this one included, and
    ``state`` is this one's (``pending`` while the run waits): a waiting parent tells a
    new request (a new ``approval_id``, a higher ``attempt``) from the same one still
    waiting. In JSON they are also ``grant_request_id``, ``grant_attempt`` and
    ``grant_state`` (Lango's names)."""

    approval_id: str
    tool: str
    prompt: str = ""
    attempt: int = 1
    state: str = "pending"

    def to_json(self) -> dict[str, Any]:
        return {
            "approval_id": self.approval_id,
            "tool": self.tool,
            "prompt": self.prompt,
            "grant_request_id": self.approval_id,
            "grant_attempt": self.attempt,
            "grant_state": self.state,
        }


@attrs.frozen
class TaskRun:
    """One task run as its owner sees it.

    ``child_thread_id`` is set once the run started (as tRPC's ``child_session_id``);
    ``summary`` is the output (or error) cut to 240 characters, ``"canceling"`` or
    ``"canceled"`` in those states; ``result`` the final answer cut to 4000 (kept on
    failed and canceled runs too); ``outcome`` the machine-readable reason of a failure
    (``timeout``, ``max_steps``, …); ``awaiting_approval`` names the tool call a running
    run is blocked on. ``usage`` is the tokens and model calls of every turn on the
    run's thread and of the runs it spawned (theirs in turn), as
    :meth:`TaskRunController.get` reads it (``None`` in lists and hook calls).
    """

    id: str
    owner: str
    parent_thread_id: str
    task: str
    status: TaskRunStatus
    created_at: float
    updated_at: float
    parent_turn_id: str | None = None
    agent_name: str | None = None
    child_thread_id: str | None = None
    summary: str = ""
    result: str = ""
    error: str = ""
    outcome: str | None = None
    progress: TaskRunProgress | None = None
    metadata: Mapping[str, str] = attrs.field(factory=dict)
    spawn_depth: int = 1
    spawn_reason: str | None = None
    allowed_tools: tuple[str, ...] | None = None
    timeout_seconds: float | None = None
    attempt: int = 0
    awaiting_approval: ApprovalWait | None = None
    started_at: float | None = None
    finished_at: float | None = None
    usage: Usage | None = None

    @property
    def thread_id(self) -> str:
        """The child thread the run's turn runs on (known from the start)."""
        return THREAD_PREFIX + self.id

    def to_json(self) -> dict[str, Any]:
        """The view as JSON: empty fields left out, times in ISO 8601 (UTC)."""
        data: dict[str, Any] = {
            "id": self.id,
            "owner": self.owner,
            "parent_thread_id": self.parent_thread_id,
            "parent_turn_id": self.parent_turn_id,
            "child_thread_id": self.child_thread_id,
            "agent_name": self.agent_name,
            "task": self.task,
            "status": self.status.value,
            "summary": self.summary,
            "result": self.result,
            "error": self.error,
            "outcome": self.outcome,
            "progress": self.progress.to_json() if self.progress else None,
            "metadata": dict(self.metadata),
            "spawn_depth": self.spawn_depth,
            "spawn_reason": self.spawn_reason,
            "allowed_tools": list(self.allowed_tools) if self.allowed_tools is not None else None,
            "timeout_seconds": self.timeout_seconds,
            "attempt": self.attempt,
            "awaiting_approval": (
                self.awaiting_approval.to_json() if self.awaiting_approval else None
            ),
            "started_at": iso(self.started_at),
            "finished_at": iso(self.finished_at),
            "usage": self.usage.to_json() if self.usage is not None else None,
        }
        shown = {k: v for k, v in data.items() if v not in (None, "", {}, [])}
        if self.allowed_tools is not None:  # narrowed to nothing is not "not narrowed"
            shown["allowed_tools"] = list(self.allowed_tools)
        shown["created_at"] = iso(self.created_at)
        shown["updated_at"] = iso(self.updated_at)
        return shown


@attrs.frozen
class SpawnRequest:
    """What a caller asks the controller to start.

    ``owner``, ``parent_thread_id`` and ``task`` are required. ``parent_turn_id`` ties
    the run to the turn that spawned it: cancelling that turn cancels the run.
    ``timeout_seconds`` bounds the run from the moment it starts (not from spawn).
    ``allowed_tools`` narrows the agent's tool scope (never widens it). ``id`` is
    optional (a new id otherwise); a duplicate is refused. ``key`` is the idempotency
    key of the tool call that spawns it (kept with the run): the spawning tools look a
    run up by it (:meth:`TaskRunController.child_by_key`), so a call found in doubt
    after a crash finds the run it started instead of starting another. A valid W3C ``traceparent``
    (and ``tracestate``) in ``metadata`` — work handed over from another process — is
    also kept as the run's turn request's trace context (``TRACE_CONTEXT_META``), so a
    tracer continues the caller's trace.
    """

    owner: str
    parent_thread_id: str
    task: str
    parent_turn_id: str | None = None
    agent_name: str | None = None
    timeout_seconds: float | None = None
    metadata: Mapping[str, str] = attrs.field(factory=dict)
    allowed_tools: tuple[str, ...] | None = None
    spawn_depth: int = 1
    spawn_reason: str | None = None
    sender: str | None = None
    priority: int | None = None
    id: str | None = None
    key: str | None = None
    budget: SpendBudget | None = None
    """The spend budget the run's turn draws on (e.g. its team's): it stops with
    ``budget_exceeded`` once every turn on that budget spent its tokens
    (docs/spend-limits.md)."""
    tool_ceiling: tuple[str, ...] | None = None
    """The most the run may escalate to with ``request_tool``: the spawning turn's tools
    (set by :func:`~toolang_core.taskruns.spawning.spawn_child` for a narrowed run), so a
    child never gains what its parent lacks (:mod:`toolang_core.turn.escalation`)."""


@attrs.frozen
class TaskRunFilter:
    """Which runs :meth:`TaskRunController.list` returns (newest first); every field set
    must match. ``owner=None`` is the operator's view (every owner)."""

    owner: str | None = None
    parent_thread_id: str | None = None
    parent_turn_id: str | None = None
    status: TaskRunStatus | None = None
    limit: int = 50


@attrs.frozen
class TranscriptEvent:
    """One event of a run's transcript (a step of its turn), as the parent reads it.

    ``role`` is ``user`` (the task), ``assistant`` (a model answer: ``content`` and the
    names of the ``tool_calls`` it asked for) or ``tool`` (a tool result, ``tool_id`` /
    ``tool_name``); ``author`` is the agent.
    """

    id: str
    author: str
    role: str
    timestamp: float
    content: str = ""
    tool_id: str = ""
    tool_name: str = ""
    tool_calls: tuple[str, ...] = ()
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "author": self.author,
            "role": self.role,
            "content": self.content,
            "tool_id": self.tool_id,
            "tool_name": self.tool_name,
            "tool_calls": list(self.tool_calls),
            "error": self.error,
        }
        shown = {k: v for k, v in data.items() if v not in ("", [])}
        shown["timestamp"] = iso(self.timestamp)
        return shown


@attrs.frozen
class TaskRunTranscript:
    """The most recent events of a run's child thread, oldest first."""

    id: str
    status: TaskRunStatus
    child_thread_id: str
    events: tuple[TranscriptEvent, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status.value,
            "child_thread_id": self.child_thread_id,
            "events": [e.to_json() for e in self.events],
        }
