"""Console: what the chat does besides sending a message — start a task run on the
thread, resubmit a turn that failed, and the fragment of what a running turn waits for
(approvals and questions, decided and answered in place).

The writes take JSON from the console's script and answer JSON, through the same objects
and owner rules as the API (:mod:`toolang_server.api_turns`); the server's origin check
guards them like every other write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from toolang_core import (
    ApprovalBook,
    NewTurnRequest,
    NotThreadOwner,
    SpawnRequest,
    SubmitRejected,
    TaskRunError,
    check_thread,
)
from toolang_server.api_questions import book_of, question_json
from toolang_server.api_turns import _THREAD, get_turn, not_yours
from toolang_server.console.pages import ENV
from toolang_server.http import ApiError, Body, caller_of, read_json, runtime_of, store_of
from toolang_server.settings import OPERATOR

if TYPE_CHECKING:
    from starlette.requests import Request

    from toolang_core import RegisterRoute, Runtime

RETRIED: Final = frozenset({"failed", "canceled", "dropped"})
"""The statuses a turn may be resubmitted from: it ended without an answer."""
NOT_RESUBMITTED: Final = frozenset({"task", "will"})
"""Sources no person submits (see the API's submit): a retry of theirs is a chat turn."""


def _agent(runtime: Runtime, body: Body) -> str | None:
    agent = body.text("agent", max_len=100) or None
    if agent is not None and runtime.agents.registry.get(agent) is None:
        known = ", ".join(d.name for d in runtime.agents.registry.active()) or "none"
        raise ApiError(400, f"no agent {agent!r}", field="agent", expected=f"one of: {known}")
    return agent


async def start_task_run(request: Request) -> dict[str, Any]:
    """Start a task run from the chat: ``{"task", "thread_id", "agent"?}`` → the run's
    ``id`` (also its turn's id, so the chat watches it like a turn)."""
    runtime, caller = runtime_of(request), caller_of(request)
    body = Body(await read_json(request, 100_000), {"task", "thread_id", "agent"})
    task = body.text("task", required=True, max_len=50_000) or ""
    thread = body.text("thread_id", required=True, max_len=200) or ""
    if not _THREAD.match(thread):  # the API's own rule for a thread id
        raise ApiError(
            400,
            f"thread_id {thread!r} is not a thread id",
            field="thread_id",
            expected=f"a string matching {_THREAD.pattern}",
        )
    agent = _agent(runtime, body)
    try:  # the run reports to this thread: it must be the caller's to use
        check_thread(store_of(runtime), thread, caller.owner)
    except NotThreadOwner as exc:
        raise not_yours(exc) from None
    try:
        run = await runtime.task_runs.spawn(
            SpawnRequest(
                # A run needs an owner; the operator's own runs are "operator"'s (the
                # name no token may take), which the operator sees like every owner's.
                owner=caller.owner or OPERATOR,
                parent_thread_id=thread,
                task=task,
                agent_name=agent,
                sender=caller.sender,
                spawn_reason="started from the console's chat",
            )
        )
    except TaskRunError as exc:
        raise ApiError(
            400, str(exc), field="task", expected="a task run the runtime accepts"
        ) from None
    return {"id": run.id, "status": run.status.value, "thread_id": thread}


async def retry_turn(request: Request) -> dict[str, Any]:
    """Resubmit a turn that ended without an answer (failed, canceled, dropped): the same
    input, thread, agent, priority, time limit and request metadata (attachments, limits,
    a typed answer's schema) as a new turn → ``{"turn_id", "status"}``."""
    runtime, caller = runtime_of(request), caller_of(request)
    turn = get_turn(runtime, caller, request.path_params["turn_id"])
    if turn.status.value not in RETRIED:
        raise ApiError(
            409,
            f"turn {turn.id} is {turn.status.value}",
            field="turn_id",
            expected=f"a turn that is {', '.join(sorted(RETRIED))}",
        )
    inbox = runtime.inbox
    assert inbox is not None
    try:
        result = inbox.submit(
            NewTurnRequest(
                source="chat" if turn.source in NOT_RESUBMITTED else turn.source,
                thread_id=turn.thread_id,
                input=turn.input,
                agent=turn.agent,
                timeout_seconds=turn.timeout_seconds,
                priority=turn.priority,
                channel="http",
                sender=caller.sender,
                owner=caller.owner,
                meta={**turn.meta, "retry_of": turn.id},
            )
        )
    except NotThreadOwner as exc:
        raise not_yours(exc) from None
    except SubmitRejected as exc:
        raise ApiError(
            409, str(exc), field="thread_id", expected="a thread that accepts it"
        ) from None
    return {"turn_id": result.id, "status": result.status, "retry_of": turn.id}


async def turn_waiting(request: Request) -> Any:
    """The HTML fragment of what turn ``turn_id`` waits for: its pending approvals and
    open questions, with buttons and answer forms for a signed-in person."""
    from starlette.responses import HTMLResponse

    runtime, caller = runtime_of(request), caller_of(request)
    turn = get_turn(runtime, caller, request.path_params["turn_id"])
    html = ENV.get_template("waiting.html").render(
        principal=caller.principal, **waiting_for(runtime, turn.id)
    )
    return HTMLResponse(html, headers={"Cache-Control": "no-store"})


def waiting_for(runtime: Runtime, turn_id: str) -> dict[str, Any]:
    """A turn's pending approvals and open questions, as the chat shows them."""
    from toolang_core import redact

    approvals = [
        {"id": a.id, "tool": a.tool, "params": redact(dict(a.params)), "prompt": a.prompt}
        for a in ApprovalBook(store_of(runtime)).list("pending")
        if a.turn_id == turn_id
    ]
    questions = [question_json(q) for q in book_of(runtime).list("open") if q.turn_id == turn_id]
    return {"turn_id": turn_id, "approvals": approvals, "questions": questions}


def register(register_route: RegisterRoute) -> None:
    register_route("/task-runs/start", start_task_run, methods=("POST",))
    register_route("/turns/{turn_id}/retry", retry_turn, methods=("POST",))
    register_route("/turns/{turn_id}/waiting", turn_waiting)
