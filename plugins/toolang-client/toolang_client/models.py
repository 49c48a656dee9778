"""The API's types, generated from toolang-server's OpenAPI document by
datamodel-code-generator: do not edit (``generate_models.py`` rewrites this module;
a test fails when it drifts from the document)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass
class AdmittedEvent:
    status: str
    attempt: int | None = None


@dataclass
class AnswerBody:
    answer: Any


@dataclass
class ApiIndex:
    openapi: str
    routes: list[str]


@dataclass
class Approval:
    id: str
    tool: str
    params: dict[str, Any]
    turn_id: str
    thread_id: str
    agent: str | None
    requester: str | None
    prompt: str | None
    created_at: float
    expires_at: float | None
    status: Literal['pending', 'approved', 'denied', 'expired']
    decided_at: float | None
    decided_by: str | None
    reason: str | None
    always: bool


@dataclass
class ApprovalEvent:
    approval_id: str
    tool: str
    params: dict[str, Any]
    prompt: str | None


@dataclass
class Attachment:
    name: str | None = None
    data: str | None = None
    sha256: str | None = None


@dataclass
class Attachment1:
    sha256: str
    media_type: str
    name: str
    size: int


@dataclass
class Canceled:
    id: str
    status: Literal['queued', 'running', 'awaiting_approval', 'canceling', 'completed', 'failed', 'canceled', 'dropped', 'steered']
    changed: dict[str, str]


@dataclass
class ChainStage:
    stage: str | None
    verdict: str | None
    plugin: str | None


@dataclass
class Decision:
    reason: str | None = None
    always: bool | None = False


@dataclass
class Error:
    error: ErrorDetail


@dataclass
class ErrorDetail:
    status: int
    message: str
    field: str | None
    expected: str | None


@dataclass
class FinishedEvent:
    turn_id: str
    status: Literal['queued', 'running', 'awaiting_approval', 'canceling', 'completed', 'failed', 'canceled', 'dropped', 'steered']
    output: Any
    error: str | None
    outcome: str | None


@dataclass
class ForkBody:
    input: str | None = None
    agent: str | None = None
    model: str | None = None
    wait: float | None = 0.0


@dataclass
class ForkMade:
    thread_id: str
    turn_id: str
    origin: str
    at_turn: str
    inherited: list[str]


@dataclass
class Forked:
    fork: ForkMade
    turn: Turn | None = None


@dataclass
class Health:
    ok: bool
    run_id: str | None


@dataclass
class Limits:
    max_tokens_per_turn: int | None = None
    max_model_calls: int | None = None


@dataclass
class ModelCallEvent:
    phase: Literal['started', 'finished']
    call: str | None = None
    seq: int | None = None
    status: str | None = None
    model: str | None = None
    tool_calls: list[str | None] | None = None
    error: str | None = None


@dataclass
class Question:
    id: str
    turn_id: str
    call_id: str
    thread_id: str
    agent: str
    owner: str | None
    text: str
    created_at: float
    choices: list[str] | None
    schema: dict[str, Any] | None
    expires_at: float | None
    status: Literal['open', 'answered', 'expired']
    answer: Any
    answered_at: float | None
    answered_by: str | None
    reason: str | None


@dataclass
class ReplayBody:
    model: str | None = None
    agent: str | None = None
    allow_tools: list[str] | None = None
    wait: float | None = 0.0


@dataclass
class Replayed:
    turn_id: str
    replay_turn_id: str
    thread_id: str
    status: str
    calls: list[ReplayedCall]
    stopped: list[ReplayedCall]
    output: str | None = None
    error: str | None = None
    original_output: str | None = None


@dataclass
class ReplayedCall:
    name: str
    params: dict[str, Any]
    answer: str
    ok: bool
    error: str | None = None


@dataclass
class RunCanceled:
    run: TaskRun
    changed: bool


@dataclass
class Step:
    turn_id: str
    seq: int
    attempt: int
    kind: str
    status: str
    started_at: float
    finished_at: float
    data: dict[str, Any]
    error: str | None
    idempotency_key: str | None


@dataclass
class StepEvent:
    seq: int
    kind: str
    status: str


@dataclass
class SubmitTurn:
    input: str
    thread_id: str | None = None
    source: str | None = 'chat'
    agent: str | None = None
    strategy: Literal['enqueue', 'reject', 'coalesce', 'interrupt', 'steer'] | None = (
        None
    )
    stream: bool | None = False
    wait: float | None = 0.0
    timeout_seconds: float | None = None
    priority: float | None = None
    id: str | None = None
    attachments: list[Attachment] | None = None
    limits: Limits | None = None
    output_schema: dict[str, Any] | None = None


@dataclass
class Submitted:
    turn_id: str
    status: Literal['queued', 'coalesced', 'exists']
    thread_id: str


@dataclass
class TaskRun:
    id: str
    owner: str
    parent_thread_id: str
    task: str
    status: Literal['queued', 'running', 'finalizing', 'canceling', 'completed', 'failed', 'canceled']
    created_at: str
    updated_at: str
    spawn_depth: int | None = 1
    parent_turn_id: str | None = None
    child_thread_id: str | None = None
    agent_name: str | None = None
    summary: str | None = None
    result: str | None = None
    error: str | None = None
    outcome: str | None = None
    progress: dict[str, Any] | None = None
    metadata: dict[str, str] | None = None
    spawn_reason: str | None = None
    allowed_tools: list[str] | None = None
    timeout_seconds: float | None = None
    attempt: int | None = None
    awaiting_approval: dict[str, Any] | None = None
    started_at: str | None = None
    finished_at: str | None = None
    usage: dict[str, Any] | None = None


@dataclass
class TextEvent:
    call: str
    delta: str


@dataclass
class Thread:
    thread_id: str
    thread_group: str
    running_id: str | None
    head_id: str | None
    created_at: float
    updated_at: float
    turns: int
    owner: str | None


@dataclass
class ThreadWithTurns:
    thread: Thread
    turns: list[Turn]


@dataclass
class ToolCallEvent:
    seq: int
    tool: str | None
    ok: bool
    error: str | None
    chain: list[ChainStage]


@dataclass
class Trace:
    turn: Turn
    steps: list[Step]
    after: list[dict[str, Any]]


@dataclass
class Transcript:
    run_id: str | None = None
    events: list[dict[str, Any]] | None = None


@dataclass
class Turn:
    id: str
    seq: int
    source: str
    thread_id: str
    thread_group: str
    priority: int
    input: str
    status: Literal['queued', 'running', 'awaiting_approval', 'canceling', 'completed', 'failed', 'canceled', 'dropped', 'steered']
    attempt: int
    created_at: float
    updated_at: float
    sender: str
    channel: str | None
    agent: str | None
    dedupe_key: str | None
    not_before: float | None
    parent: str | None
    owner: str | None
    timeout_seconds: float | None
    meta: dict[str, Any]
    started_at: float | None
    finished_at: float | None
    cancel_requested: bool
    output: Any
    outcome: str | None
    error: str | None


@dataclass
class Usage:
    since: float
    owners: dict[str, dict[str, Any]] | None = None
