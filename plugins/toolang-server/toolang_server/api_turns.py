"""Threads and turn requests over HTTP: submit (optionally streamed), list, show,
steps, trace, events, cancel."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any, Final

import attrs
from starlette.responses import Response, StreamingResponse

from toolang_core import (
    AFTER_KIND,
    OUTPUT_SCHEMA,
    NewTurnRequest,
    NotThreadOwner,
    SubmitRejected,
    TurnFilter,
    TurnNotFound,
    TurnRequest,
    TurnStatus,
    may_see,
    output_value,
    threads_seen_by,
    trace_context_meta,
    with_attachments,
)
from toolang_server import api_attachments
from toolang_server.api_usage import request_limits
from toolang_server.auth import require_person
from toolang_server.finished import FinishedTurns
from toolang_server.http import (
    ApiError,
    Body,
    Caller,
    caller_of,
    not_found,
    ok,
    query_choice,
    query_int,
    read_json,
    runtime_of,
    store_of,
    to_json,
)
from toolang_server.progress import turn_events

if TYPE_CHECKING:
    from starlette.requests import Request

    from toolang_core import RegisterRoute, Runtime

STRATEGIES: Final = ("enqueue", "reject", "coalesce", "interrupt", "steer")
STATUSES: Final = tuple(s.value for s in TurnStatus)
_THREAD: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,199}$")
_SOURCE: Final = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
SUBMIT_FIELDS: Final = {
    "input",
    "thread_id",
    "source",
    "agent",
    "strategy",
    "stream",
    "wait",
    "timeout_seconds",
    "priority",
    "id",
    "attachments",
    "limits",
    "output_schema",
}
MAX_WAIT: Final = 300.0


def visible(turn: TurnRequest | None, caller: Caller) -> bool:
    """The operator sees every turn; an owner only its own (others are "not found")."""
    return turn is not None and may_see(turn.owner, caller.owner)


def sees_turn(runtime: Runtime, caller: Caller, turn_id: str) -> bool:
    """Whether ``caller`` may see what hangs off turn ``turn_id`` (its approvals): the
    read rule on the turn's owner. A turn deleted since (retention) is no owner's, so
    only the operator still sees what it left."""
    turn = store_of(runtime).get(turn_id)
    return may_see(turn.owner if turn is not None else None, caller.owner)


def not_yours(exc: NotThreadOwner) -> ApiError:
    """The owner rule's refusal over HTTP: one status and message on every route."""
    return ApiError(
        exc.http_status,
        str(exc),
        field="thread_id",
        expected="a thread of your own, or a new one",
    )


def get_turn(runtime: Runtime, caller: Caller, turn_id: str) -> TurnRequest:
    turn = store_of(runtime).get(turn_id)
    if not visible(turn, caller):
        raise not_found("turn request", turn_id)
    assert turn is not None
    return turn


_SHOWN: Final = tuple(
    f.name
    for f in attrs.fields(TurnRequest)
    if f.name not in {"rank", "lease_owner", "lease_expires", "steer"}
)
"""A turn request's fields as the API shows them (the scheduler's own are left out)."""


def turn_json(turn: TurnRequest, runtime: Runtime | None = None) -> dict[str, Any]:
    """The turn as the API shows it; a typed answer's ``output`` is its JSON value
    (with ``runtime``, an agent's own ``output_schema`` is known too)."""
    # Field by field: what every submit with ``wait`` answers, so no attrs.asdict copy.
    shown = {name: to_json(getattr(turn, name)) for name in _SHOWN}
    shown["output"] = output_value(turn, runtime.agents if runtime is not None else None)
    return shown


def output_schema_meta(body: Body) -> dict[str, Any]:
    """The request's ``output_schema`` (a typed answer) as turn request metadata.

    :raises ApiError: 422 naming the field when it is not a usable JSON Schema.
    """
    from toolang_core import SchemaError, check_schema

    if body.data.get("output_schema") is None:
        return {}
    try:
        schema = check_schema(body.data["output_schema"], where="output_schema")
    except SchemaError as exc:
        raise ApiError(
            422,
            str(exc),
            field="output_schema",
            expected="a JSON Schema object (see docs/typed-answers.md)",
        ) from None
    return {OUTPUT_SCHEMA: schema}


async def submit(request: Request) -> Response:
    """Submit a turn request; with "stream": true the answer streams back as SSE."""
    runtime, caller = runtime_of(request), caller_of(request)
    body = Body(await read_json(request, request.app.state.settings.max_body_bytes), SUBMIT_FIELDS)
    text = body.text("input", required=True)
    thread = body.text("thread_id", default=f"http:{caller.owner or 'local'}")
    assert thread is not None
    if not _THREAD.match(thread):
        raise ApiError(
            400,
            f"thread_id {thread!r} is not a thread id",
            field="thread_id",
            expected=f"a string matching {_THREAD.pattern}",
        )
    source = body.text("source", default="chat")
    assert source is not None
    if not _SOURCE.match(source) or source in ("task", "will"):
        raise ApiError(
            400,
            f"source {source!r} cannot be submitted here",
            field="source",
            expected="a source name such as chat, invoke or chore (task runs are "
            "started by agents, will turns by the agents' own intent)",
        )
    agent = body.text("agent", max_len=100)
    if agent is not None and runtime.agents.registry.get(agent) is None:
        known = ", ".join(d.name for d in runtime.agents.registry.active()) or "none"
        raise ApiError(400, f"no agent {agent!r}", field="agent", expected=f"one of: {known}")
    strategy = body.text("strategy", choices=STRATEGIES)
    stream = body.flag("stream")
    wait = body.number("wait", default=0.0, high=MAX_WAIT)
    timeout = body.number("timeout_seconds")
    priority = body.number("priority", low=-1000, high=1000)
    turn_id = body.text("id", max_len=100)
    limits = request_limits(body.data.get("limits"))
    typed = output_schema_meta(body)
    if stream and wait:
        raise ApiError(
            400,
            "stream and wait exclude each other",
            field="wait",
            expected="0 (or absent) when stream is true",
        )
    inbox = runtime.inbox
    assert inbox is not None
    meta = {**trace_context_meta(request.headers), **limits, **typed}
    refs = api_attachments.parts_of(runtime, caller, body.data.get("attachments"), agent=agent)
    if refs:
        meta = with_attachments(meta, refs)
    try:
        result = inbox.submit(
            NewTurnRequest(
                source=source,
                thread_id=thread,
                input=text or "",
                agent=agent,
                strategy=strategy,  # type: ignore[arg-type]
                timeout_seconds=timeout,
                priority=int(priority) if priority is not None else None,
                channel="http",
                sender=caller.sender,
                owner=caller.owner,
                id=turn_id,
                # The caller's W3C trace context (a tracer parents the turn's span from
                # it), the turn's own limits, a typed answer's schema, the attachments.
                meta=meta,
            )
        )
    except NotThreadOwner as exc:
        # The store holds every door to the one owner rule (toolang_core.store.owners):
        # the thread's history goes into every prompt on it.
        raise not_yours(exc) from None
    except SubmitRejected as exc:
        raise ApiError(
            409,
            str(exc),
            field="thread_id",
            expected="a thread whose strategy accepts this request",
        ) from None
    except ValueError as exc:
        raise ApiError(400, str(exc), field="id", expected="a valid id") from None
    if stream:
        return StreamingResponse(
            turn_events(runtime, result.id),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Toolang-Turn": result.id},
        )
    if wait:
        turn = await FinishedTurns.of(runtime).wait(
            runtime, result.id, wait, just_queued=result.status == "queued"
        )
        return ok(turn_json(turn, runtime), 200 if turn.status.is_terminal else 202)
    return ok({"turn_id": result.id, "status": result.status, "thread_id": thread}, 202)


async def list_turns(request: Request) -> Response:
    """Turn requests, newest first; filter by thread_id, status, source."""
    runtime, caller = runtime_of(request), caller_of(request)
    status = query_choice(request, "status", STATUSES)
    found = store_of(runtime).list_turns(
        TurnFilter(
            thread_id=request.query_params.get("thread_id"),
            status=(TurnStatus(status),) if status else (),
            source=request.query_params.get("source"),
            owner=caller.owner,
            limit=query_int(request, "limit", 50),
        )
    )
    return ok([turn_json(t, runtime) for t in found])


async def show_turn(request: Request) -> Response:
    """One turn request: state, input, output, error."""
    runtime = runtime_of(request)
    turn = get_turn(runtime, caller_of(request), request.path_params["turn_id"])
    return ok(turn_json(turn, runtime))


async def turn_steps(request: Request) -> Response:
    """The recorded steps of one turn, in order."""
    runtime = runtime_of(request)
    turn = get_turn(runtime, caller_of(request), request.path_params["turn_id"])
    return ok(store_of(runtime).steps(turn.id))


async def turn_trace(request: Request) -> Response:
    """The run trace: steps, each tool call's hook verdicts, the after-turn stages.

    The after-turn stages come in their order: turn state, prompt trace, memory write,
    events, delivery."""
    runtime = runtime_of(request)
    turn = get_turn(runtime, caller_of(request), request.path_params["turn_id"])
    store = store_of(runtime)
    after = store.get_record(AFTER_KIND, turn.id)
    return ok(
        {
            "turn": turn_json(turn, runtime),
            "steps": store.steps(turn.id),
            "after": list((after.data.get("stages") or ()) if after is not None else ()),
        }
    )


async def turn_events_route(request: Request) -> Response:
    """Watch a turn's progress as Server-Sent Events (attach at any time)."""
    runtime = runtime_of(request)
    turn = get_turn(runtime, caller_of(request), request.path_params["turn_id"])
    return StreamingResponse(
        turn_events(runtime, turn.id),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store"},
    )


async def cancel_turn(request: Request) -> Response:
    """Cancel a turn request (queued: at once; running: it winds down).

    A caller without a credential may cancel only what it submitted itself; anything
    else needs a signed-in person."""
    runtime, caller = runtime_of(request), caller_of(request)
    turn = get_turn(runtime, caller, request.path_params["turn_id"])
    who = caller.principal
    if who is None and (turn.sender, turn.owner) != (caller.sender, caller.owner):
        who = require_person(request, caller, "cancelling work another caller submitted")
    try:
        result = store_of(runtime).cancel(
            turn.id, now=time.time(), reason=f"canceled by {who or caller.sender}"
        )
    except TurnNotFound:
        raise not_found("turn request", turn.id) from None
    return ok(result)


async def list_threads(request: Request) -> Response:
    """Threads, most recently active first (an owner sees its own threads)."""
    runtime, caller = runtime_of(request), caller_of(request)
    limit = query_int(request, "limit", 50)
    return ok(threads_seen_by(store_of(runtime), caller.owner, limit=limit))


async def show_thread(request: Request) -> Response:
    """One thread and its turns, oldest first."""
    runtime, caller = runtime_of(request), caller_of(request)
    store = store_of(runtime)
    thread_id = request.path_params["thread_id"]
    info = store.thread(thread_id)
    turns = [
        t
        for t in store.list_turns(
            TurnFilter(thread_id=thread_id, limit=query_int(request, "limit", 50))
        )
        if visible(t, caller)
    ]
    if info is None or not may_see(info.owner, caller.owner):
        raise ApiError(
            404,
            f"no thread {thread_id!r}",
            field="thread_id",
            expected="the id of a thread (GET /api/threads)",
        )
    return ok({"thread": info, "turns": [turn_json(t, runtime) for t in reversed(turns)]})


def register(register_route: RegisterRoute) -> None:
    register_route("/api/threads", list_threads)
    register_route("/api/threads/{thread_id:path}", show_thread)
    register_route("/api/turns", submit, methods=("POST",))
    register_route("/api/turns", list_turns)
    register_route("/api/turns/{turn_id}", show_turn)
    register_route("/api/turns/{turn_id}/steps", turn_steps)
    register_route("/api/turns/{turn_id}/trace", turn_trace)
    register_route("/api/turns/{turn_id}/events", turn_events_route)
    register_route("/api/turns/{turn_id}/cancel", cancel_turn, methods=("POST",))
