"""Threads and turn requests over HTTP: submit (optionally streamed), list, show,
steps, trace, events, cancel."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any, Final

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
from toolang_server import api_attachments, models
from toolang_server.api_usage import request_limits
from toolang_server.auth import require_person
from toolang_server.finished import FinishedTurns
from toolang_server.http import (
    ApiError,
    Caller,
    caller_of,
    not_found,
    ok,
    read_json,
    runtime_of,
    store_of,
    to_json,
)
from toolang_server.models import THREAD_PATTERN, TURN_SHOWN
from toolang_server.openapi import IDEMPOTENCY_HEADER, operation
from toolang_server.progress import turn_events
from toolang_server.schema import parse_body, parse_query

if TYPE_CHECKING:
    from starlette.requests import Request

    from toolang_core import RegisterRoute, Runtime

_THREAD: Final = re.compile(THREAD_PATTERN)
IDEMPOTENCY_KEY_MAX: Final = 200
UNRECORDED: Final = (
    "not recorded: begun after the turn's state was committed, its outcome never stored "
    "(the runtime stopped first, and it may not have run; or its record could not be "
    "stored, which the log says)"
)
"""Why an after-turn stage named ``unfinished`` in the turn's after-record shows no outcome."""


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


def turn_json(turn: TurnRequest, runtime: Runtime | None = None) -> dict[str, Any]:
    """The turn as the API shows it; a typed answer's ``output`` is its JSON value
    (with ``runtime``, an agent's own ``output_schema`` is known too)."""
    # Field by field: what every submit with ``wait`` answers, so no attrs.asdict copy.
    shown = {name: to_json(getattr(turn, name)) for name in TURN_SHOWN}
    shown["output"] = output_value(turn, runtime.agents if runtime is not None else None)
    return shown


def output_schema_meta(value: Any) -> dict[str, Any]:
    """The request's ``output_schema`` (a typed answer) as turn request metadata.

    :raises ApiError: 422 naming the field when it is not a usable JSON Schema.
    """
    from toolang_core import SchemaError, check_schema

    if value is None:
        return {}
    try:
        schema = check_schema(value, where="output_schema")
    except SchemaError as exc:
        raise ApiError(
            422,
            str(exc),
            field="output_schema",
            expected="a JSON Schema object (see docs/typed-answers.md)",
        ) from None
    return {OUTPUT_SCHEMA: schema}


DERIVED_ID_PREFIXES: Final = ("idem-", "a2a-", "mcp-")
"""Ids derived from an owner and that owner's key (a hash): a chosen id may not take
one, or it would answer another owner's later request with the chooser's turn."""


def idempotent_id(request: Request, caller: Caller, chosen: str | None) -> str | None:
    """The turn id a submit asks for: its ``id``, or one derived from its
    ``Idempotency-Key`` header and the caller's owner (so two owners' keys never meet),
    or ``None`` (a new id).

    :raises ApiError: 400 for a key that is empty or too long, or sent with an ``id``.
    """
    if chosen is not None and chosen.startswith(DERIVED_ID_PREFIXES):
        raise ApiError(
            400,
            f"the id {chosen!r} starts with {chosen.split('-', 1)[0]}-, which is kept for "
            "the ids the runtime derives per owner (Idempotency-Key, A2A, MCP)",
            field="id",
            expected="an id of your own that starts otherwise",
        )
    key = request.headers.get(IDEMPOTENCY_HEADER)
    if key is None:
        return chosen
    if chosen is not None:
        raise ApiError(
            400,
            f"both id and an {IDEMPOTENCY_HEADER} header were sent",
            field=IDEMPOTENCY_HEADER,
            expected="one of them: the id is already idempotent",
        )
    if not key.strip() or len(key) > IDEMPOTENCY_KEY_MAX:
        raise ApiError(
            400,
            f"the {IDEMPOTENCY_HEADER} header is empty or longer than {IDEMPOTENCY_KEY_MAX}",
            field=IDEMPOTENCY_HEADER,
            expected=f"1 to {IDEMPOTENCY_KEY_MAX} characters",
        )
    import hashlib

    digest = hashlib.sha256(f"{caller.owner or ''}\0{key}".encode()).hexdigest()
    return f"idem-{digest[:32]}"


def same_request(runtime: Runtime, turn_id: str, text: str) -> None:
    """Check that a submit whose ``Idempotency-Key`` was seen before repeats that
    request (its input); the stored input is masked, so compare masked.

    :raises ApiError: 409 when the key was used for another input."""
    from toolang_core import redact_text

    stored = store_of(runtime).get(turn_id)
    if stored is not None and stored.input not in (text, redact_text(text)):
        raise ApiError(
            409,
            f"this {IDEMPOTENCY_HEADER} was used for another request (turn {turn_id})",
            field=IDEMPOTENCY_HEADER,
            expected="a new key for a new request",
        )


def taken(runtime: Runtime, caller: Caller, turn_id: str) -> None:
    """Check that a submit whose id was taken already (a chosen ``id`` sent again)
    names a turn the caller may see: what the submit answers (its state, its answer,
    its events) is that turn.

    :raises ApiError: 409 when the turn with that id is another owner's."""
    if not visible(store_of(runtime).get(turn_id), caller):
        raise ApiError(
            409,
            f"the id {turn_id!r} is taken",
            field="id",
            expected="a new id, or none (the runtime makes one)",
        )


@operation(
    body=models.SubmitTurn,
    responses={200: models.Turn, 202: models.Turn | models.Submitted},
    stream=True,
    headers={
        IDEMPOTENCY_HEADER: "A key of your choosing (at most 200 characters): a submit "
        "retried with the same key returns the turn the first one created (status "
        "`exists`) instead of creating another; the same key with another input is refused "
        "(409).",
        "traceparent": "W3C trace context: the turn's span is its child.",
    },
    errors=(400, 404, 409, 413, 422, 503),
)
async def submit(request: Request) -> Response:
    """Submit a turn request; with "stream": true the answer streams back as SSE."""
    runtime, caller = runtime_of(request), caller_of(request)
    data = await read_json(request, request.app.state.settings.max_body_bytes)
    sent = parse_body(models.SubmitTurn, data)
    text = sent.input
    thread = sent.thread_id or f"http:{caller.owner or 'local'}"
    if not _THREAD.match(thread):
        raise ApiError(
            400,
            f"thread_id {thread!r} is not a thread id",
            field="thread_id",
            expected=f"a string matching {_THREAD.pattern}",
        )
    source = sent.source or "chat"
    if source in ("task", "will"):
        raise ApiError(
            400,
            f"source {source!r} cannot be submitted here",
            field="source",
            expected="a source name such as chat, invoke or chore (task runs are "
            "started by agents, will turns by the agents' own intent)",
        )
    agent = sent.agent
    if agent is not None and runtime.agents.registry.get(agent) is None:
        known = ", ".join(d.name for d in runtime.agents.registry.active()) or "none"
        raise ApiError(400, f"no agent {agent!r}", field="agent", expected=f"one of: {known}")
    strategy, stream, wait = sent.strategy, sent.stream, sent.wait or 0.0
    timeout, priority = sent.timeout_seconds, sent.priority
    turn_id = idempotent_id(request, caller, sent.id)
    limits = request_limits(sent.limits)
    typed = output_schema_meta(sent.output_schema)
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
    refs = api_attachments.parts_of(runtime, caller, sent.attachments, agent=agent)
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
    if result.status == "exists":
        taken(runtime, caller, result.id)
        if turn_id is not None and sent.id is None:
            same_request(runtime, result.id, text or "")
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


@operation(query=models.TurnQuery, responses={200: list[models.Turn]}, errors=(400,))
async def list_turns(request: Request) -> Response:
    """Turn requests, newest first; filter by thread_id, status, source."""
    runtime, caller = runtime_of(request), caller_of(request)
    query = parse_query(models.TurnQuery, request.query_params)
    found = store_of(runtime).list_turns(
        TurnFilter(
            thread_id=query.thread_id,
            status=(TurnStatus(query.status),) if query.status else (),
            source=query.source,
            owner=caller.owner,
            limit=query.limit,
        )
    )
    return ok([turn_json(t, runtime) for t in found])


@operation(responses={200: models.Turn})
async def show_turn(request: Request) -> Response:
    """One turn request: state, input, output, error."""
    runtime = runtime_of(request)
    turn = get_turn(runtime, caller_of(request), request.path_params["turn_id"])
    return ok(turn_json(turn, runtime))


@operation(responses={200: list[models.Step]})
async def turn_steps(request: Request) -> Response:
    """The recorded steps of one turn, in order."""
    runtime = runtime_of(request)
    turn = get_turn(runtime, caller_of(request), request.path_params["turn_id"])
    return ok(store_of(runtime).steps(turn.id))


@operation(responses={200: models.Trace})
async def turn_trace(request: Request) -> Response:
    """The run trace: steps, each tool call's hook verdicts, the after-turn stages.

    The after-turn stages come in their order: turn state, prompt trace, memory write,
    events, delivery; one begun and never recorded (the runtime stopped first, or its
    record could not be stored) has ``unknown`` true and says so in its error."""
    runtime = runtime_of(request)
    turn = get_turn(runtime, caller_of(request), request.path_params["turn_id"])
    store = store_of(runtime)
    after = store.get_record(AFTER_KIND, turn.id)
    data = after.data if after is not None else {}
    unfinished = [  # begun after the turn's state was committed, never recorded
        {"stage": name, "ok": False, "unknown": True, "detail": {"error": UNRECORDED}}
        for name in data.get("unfinished") or ()
    ]
    return ok(
        {
            "turn": turn_json(turn, runtime),
            "steps": store.steps(turn.id),
            "after": [*(data.get("stages") or ()), *unfinished],
        }
    )


@operation(stream=True)
async def turn_events_route(request: Request) -> Response:
    """Watch a turn's progress as Server-Sent Events (attach at any time)."""
    runtime = runtime_of(request)
    turn = get_turn(runtime, caller_of(request), request.path_params["turn_id"])
    return StreamingResponse(
        turn_events(runtime, turn.id),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store"},
    )


@operation(responses={200: models.Canceled})
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


@operation(query=models.Limit, responses={200: list[models.Thread]}, errors=(400,))
async def list_threads(request: Request) -> Response:
    """Threads, most recently active first (an owner sees its own threads)."""
    runtime, caller = runtime_of(request), caller_of(request)
    limit = parse_query(models.Limit, request.query_params).limit
    return ok(threads_seen_by(store_of(runtime), caller.owner, limit=limit))


@operation(query=models.Limit, responses={200: models.ThreadWithTurns})
async def show_thread(request: Request) -> Response:
    """One thread and its turns, oldest first."""
    runtime, caller = runtime_of(request), caller_of(request)
    store = store_of(runtime)
    thread_id = request.path_params["thread_id"]
    info = store.thread(thread_id)
    turns = [
        t
        for t in store.list_turns(
            TurnFilter(
                thread_id=thread_id, limit=parse_query(models.Limit, request.query_params).limit
            )
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
