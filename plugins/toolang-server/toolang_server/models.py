"""The API's typed models: request bodies and queries (validated by the handlers with
:func:`~toolang_server.schema.parse_body` / :func:`~toolang_server.schema.parse_query`),
responses, the error shape and the SSE events — the one source of the OpenAPI
document (:mod:`toolang_server.openapi`)."""

from __future__ import annotations

from typing import Any, Final

import attrs

from toolang_core import TaskRunStatus, TurnStatus
from toolang_server.schema import field, required, response

STRATEGIES: Final = ("enqueue", "reject", "coalesce", "interrupt", "steer")
STATUSES: Final = tuple(s.value for s in TurnStatus)
RUN_STATUSES: Final = tuple(s.value for s in TaskRunStatus)
APPROVAL_STATUSES: Final = ("pending", "approved", "denied", "expired")
QUESTION_STATUSES: Final = ("open", "answered", "expired", "all")
THREAD_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,199}$"
SOURCE_PATTERN: Final = r"^[a-z][a-z0-9_-]{0,39}$"
MAX_WAIT: Final = 300.0
_OBJECT: Final = {"type": "object"}

# ---------------------------------------------------------------- request bodies


@attrs.frozen
class SubmitTurn:
    """A turn request to submit (POST /api/turns).

    With ``stream`` the answer comes back as Server-Sent Events; with ``wait`` the
    server answers when the turn is finished (200) or the wait is over (202); else at
    once (202). An ``Idempotency-Key`` header makes a retried submit return the turn
    the first one created instead of creating another."""

    input: str = attrs.field(
        metadata=required(
            "What the person (or program) says to the agent.",
            example="Summarise yesterday's failed turns.",
        )
    )
    thread_id: str | None = field(
        "The thread to talk on (default ``http:<owner>``, or ``http:local``).",
        max_len=200,
        pattern=THREAD_PATTERN,
        example="chat:docs",
    )
    source: str | None = field(
        "The turn source (``chat``, ``invoke``, ``chore`` …; not ``task`` or ``will``).",
        max_len=40,
        pattern=SOURCE_PATTERN,
        default="chat",
    )
    agent: str | None = field("The agent that answers (GET /api/agents).", max_len=100)
    strategy: str | None = field("What happens when the thread is busy.", choices=STRATEGIES)
    stream: bool = field("Answer as Server-Sent Events (text/event-stream).", default=False)
    wait: float | None = field(
        "Seconds to wait for the turn to finish (0: answer at once).",
        low=0,
        high=MAX_WAIT,
        default=0.0,
    )
    timeout_seconds: float | None = field("The turn's own time limit.", low=0, high=86400)
    priority: float | None = field("Scheduler priority (higher runs first).", low=-1000, high=1000)
    id: str | None = field(
        "The turn request's id (default: a new one). Sent again, the submit answers that "
        "turn (status `exists`); an id another owner's turn has is refused (409).",
        max_len=100,
    )
    attachments: Any = field(
        "Files for the model: each part base64 bytes or an upload's hash (POST /api/attachments).",
        schema={
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 255},
                    "data": {"type": "string", "contentEncoding": "base64"},
                    "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                },
                "additionalProperties": False,
            },
        },
    )
    limits: Any = field(
        "This turn's own spend limits (docs/spend-limits.md).",
        schema={
            "type": "object",
            "properties": {
                "max_tokens_per_turn": {"type": "integer", "minimum": 1},
                "max_model_calls": {"type": "integer", "minimum": 1},
            },
            "additionalProperties": False,
        },
    )
    output_schema: Any = field(
        "A JSON Schema the answer must fit (a typed answer, docs/typed-answers.md).",
        schema=_OBJECT,
    )


@attrs.frozen
class Decision:
    """A person's decision on an approval request."""

    reason: str | None = field("Why (shown to the model on a denial).", max_len=2000)
    always: bool = field(
        "Approve this tool with these params from now on (approvals only).", default=False
    )


@attrs.frozen
class AnswerBody:
    """A person's answer to a question: text, or a JSON value when the question has a
    schema."""

    answer: Any = attrs.field(metadata=required("The answer.", schema={}, example="yes"))


# ---------------------------------------------------------------- queries


@attrs.frozen
class Limit:
    """How many to list."""

    limit: int = field("At most this many (1 to 1000).", default=50, low=1, high=1000)


@attrs.frozen
class TurnQuery:
    """Which turn requests to list."""

    thread_id: str | None = field("Only this thread's.")
    status: str | None = field("Only those in this state.", choices=STATUSES)
    source: str | None = field("Only those from this turn source.")
    limit: int = field("At most this many (1 to 1000).", default=50, low=1, high=1000)


@attrs.frozen
class RunQuery:
    """Which task runs to list."""

    parent_thread_id: str | None = field("Only those started from this thread.")
    status: str | None = field("Only those in this state.", choices=RUN_STATUSES)
    limit: int = field("At most this many (1 to 1000).", default=50, low=1, high=1000)


@attrs.frozen
class TranscriptQuery:
    """How much of a transcript to read."""

    limit: int = field("The most recent events (1 to 200).", default=40, low=1, high=200)


@attrs.frozen
class WaitQuery:
    """How long to wait."""

    timeout: int = field("Seconds to wait (0 to 300).", default=30, low=0, high=300)


@attrs.frozen
class ApprovalQuery:
    """Which approval requests to list."""

    status: str | None = field("Only those in this state.", choices=APPROVAL_STATUSES)


@attrs.frozen
class QuestionQuery:
    """Which questions to list."""

    status: str | None = field(
        "Only those in this state.", choices=QUESTION_STATUSES, default="open"
    )


@attrs.frozen
class MemoryQuery:
    """A memory search."""

    q: str = attrs.field(metadata=required("What to search for.", example="deploy"))
    agent: str | None = field("Whose memory (default: the default agent).")
    thread_id: str | None = field("Only what was remembered on this thread (one of yours).")
    limit: int = field("At most this many items (1 to 100).", default=10, low=1, high=100)


@attrs.frozen
class UsageQuery:
    """Which turns' usage to sum."""

    turn_id: str | None = field("One turn's.")
    thread_id: str | None = field("One thread's (a task run's is ``task:<id>``).")
    task_run: str | None = field("A task run's, with the runs it spawned.")
    since: str | None = field(
        "Seconds since the epoch (default: 00:00 UTC today).",
        schema={"type": "string", "pattern": r"^[0-9.eE+-]+$"},
    )


@attrs.frozen
class UploadQuery:
    """An upload's name."""

    name: str = attrs.field(
        metadata=required("The file's name (1 to 255 characters).", example="notes.txt")
    )


# ---------------------------------------------------------------- responses


@response
@attrs.frozen
class ErrorDetail:
    """What was refused and what to send instead."""

    status: int
    message: str
    field: str | None
    """The field, parameter or header at fault."""
    expected: str | None
    """What was expected there."""


@response
@attrs.frozen
class Error:
    """Every 4xx and 5xx the API answers."""

    error: ErrorDetail


@response
@attrs.frozen
class Turn:
    """A turn request as the API shows it (the scheduler's own fields left out)."""

    id: str
    seq: int
    source: str
    thread_id: str
    thread_group: str
    priority: int
    input: str
    status: str = attrs.field(metadata=required("The turn's state.", choices=STATUSES))
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
    output: Any = attrs.field(
        metadata=required("The answer: text, or a typed answer's JSON value.")
    )
    outcome: str | None
    error: str | None


TURN_SHOWN: Final = tuple(a.name for a in attrs.fields(Turn) if a.name != "output")
"""The stored fields a :class:`Turn` shows (``output`` is read through the agent's
output schema)."""


@response
@attrs.frozen
class Submitted:
    """A submitted turn request, not waited for."""

    turn_id: str
    status: str = attrs.field(
        metadata=required(
            "``queued``; ``coalesced`` (merged into a queued one); ``exists`` (its id, or "
            "its Idempotency-Key, was submitted before).",
            choices=("queued", "coalesced", "exists"),
        )
    )
    thread_id: str


@response
@attrs.frozen
class Thread:
    """A thread: its group, its latest and running turns, how many it has."""

    thread_id: str
    thread_group: str
    running_id: str | None
    head_id: str | None
    created_at: float
    updated_at: float
    turns: int
    owner: str | None


@response
@attrs.frozen
class ThreadWithTurns:
    """A thread and its turns, oldest first."""

    thread: Thread
    turns: list[Turn]


@response
@attrs.frozen
class Step:
    """One recorded step of a turn (prompt build, model call, tool call …)."""

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


@response
@attrs.frozen
class Trace:
    """A turn's trace: the turn, its steps, the after-turn stages in order."""

    turn: Turn
    steps: list[Step]
    after: list[dict[str, Any]]


@response
@attrs.frozen
class Canceled:
    """What a cancel changed: each affected request's new status."""

    id: str
    status: str = attrs.field(metadata=required(choices=STATUSES))
    changed: dict[str, str]


@response
@attrs.frozen
class TaskRun:
    """A task run (empty fields left out; times in ISO 8601, UTC)."""

    id: str
    owner: str
    parent_thread_id: str
    task: str
    status: str = attrs.field(metadata=required(choices=RUN_STATUSES))
    created_at: str
    updated_at: str
    spawn_depth: int = 1
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


@response
@attrs.frozen
class RunCanceled:
    """A canceled task run, and whether this call changed it."""

    run: TaskRun
    changed: bool


@response
@attrs.frozen
class Transcript:
    """A task run's most recent transcript events."""

    run_id: str | None = None
    events: list[dict[str, Any]] | None = None


@response
@attrs.frozen
class Approval:
    """A tool call waiting for (or decided by) a person."""

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
    status: str = attrs.field(metadata=required(choices=APPROVAL_STATUSES))
    decided_at: float | None
    decided_by: str | None
    reason: str | None
    always: bool


@response
@attrs.frozen
class Question:
    """A question an agent asked a person (``ask_person``)."""

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
    status: str = attrs.field(metadata=required(choices=("open", "answered", "expired")))
    answer: Any = attrs.field(metadata=required(schema={}))
    answered_at: float | None
    answered_by: str | None
    reason: str | None


@response
@attrs.frozen
class Health:
    """Whether the runtime admits work."""

    ok: bool
    run_id: str | None


@response
@attrs.frozen
class Attachment:
    """A stored attachment's reference."""

    sha256: str
    media_type: str
    name: str
    size: int


@response
@attrs.frozen
class Usage:
    """Tokens and model calls summed (``owners``: each owner's, for the operator)."""

    since: float
    owners: dict[str, dict[str, Any]] | None = None


@response
@attrs.frozen
class ApiIndex:
    """Where the OpenAPI document is, and every route's method and path."""

    openapi: str
    routes: list[str]


# ---------------------------------------------------------------- SSE events


@response
@attrs.frozen
class AdmittedEvent:
    """``admitted``: the turn started running."""

    status: str
    attempt: int | None = None


@response
@attrs.frozen
class ModelCallEvent:
    """``model_call``: ``phase`` ``started`` (its first text arrived, with ``call``) or
    ``finished`` (the step is recorded, with the tool calls it asked for)."""

    phase: str = attrs.field(metadata=required(choices=("started", "finished")))
    call: str | None = None
    seq: int | None = None
    status: str | None = None
    model: str | None = None
    tool_calls: list[str | None] | None = None
    error: str | None = None


@response
@attrs.frozen
class ChainStage:
    """One hook stage's verdict on a tool call."""

    stage: str | None
    verdict: str | None
    plugin: str | None


@response
@attrs.frozen
class ToolCallEvent:
    """``tool_call``: a tool call's result and every hook stage's verdict."""

    seq: int
    tool: str | None
    ok: bool
    error: str | None
    chain: list[ChainStage]


@response
@attrs.frozen
class ApprovalEvent:
    """``approval``: a tool call waits for a person (POST /api/approvals/{id}/approve)."""

    approval_id: str
    tool: str
    params: dict[str, Any]
    prompt: str | None


@response
@attrs.frozen
class TextEvent:
    """``text``: answer text as the model produces it; the deltas of the last ``call``
    join to the stored output."""

    call: str
    delta: str


@response
@attrs.frozen
class StepEvent:
    """``step``: another step was recorded."""

    seq: int
    kind: str
    status: str


@response
@attrs.frozen
class FinishedEvent:
    """``finished``: the last event — the turn's final state."""

    turn_id: str
    status: str = attrs.field(metadata=required(choices=STATUSES))
    output: Any = attrs.field(metadata=required(schema={}))
    error: str | None
    outcome: str | None


SSE_EVENTS: Final[dict[str, type[Any]]] = {
    "admitted": AdmittedEvent,
    "model_call": ModelCallEvent,
    "progress": dict,
    "tool_call": ToolCallEvent,
    "approval": ApprovalEvent,
    "text": TextEvent,
    "step": StepEvent,
    "finished": FinishedEvent,
}
"""Each event a turn's stream sends (``event:`` name → its ``data``'s model); a
``progress`` event is what the tool reported (any JSON object)."""
