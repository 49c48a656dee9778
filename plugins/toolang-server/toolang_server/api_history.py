"""History as a tool over HTTP: fork a thread at a turn, replay a turn against another
model or agent (``toolang_core``'s ``fork_thread`` and ``plan_replay``; see
docs/history.md). Both act on a turn the caller may see, and only its owner may use
it: another owner gets 404 (not seen) or 403 (seen, not theirs — the operator)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from starlette.responses import Response

from toolang_core import (
    NotThreadOwner,
    ReplayReport,
    TurnNotFound,
    UsageError,
    check_agent_and_model,
    fork_thread,
    plan_replay,
    replay_report,
    submit_replay,
)
from toolang_server import models_history as models
from toolang_server.api_turns import get_turn, not_yours, turn_json
from toolang_server.finished import FinishedTurns
from toolang_server.http import ApiError, caller_of, ok, read_json, runtime_of
from toolang_server.openapi import operation
from toolang_server.schema import parse_body

if TYPE_CHECKING:
    from starlette.requests import Request

    from toolang_core import RegisterRoute, Runtime, TurnRequest


def _choices(
    runtime: Runtime, agent: str | None, model: str | None
) -> tuple[str | None, str | None]:
    try:
        check_agent_and_model(runtime, agent=agent, model=model)
    except UsageError as exc:
        field = "agent" if str(exc).startswith("agent") else "model"
        expected = f"an {field} this runtime has"
        raise ApiError(400, str(exc), field=field, expected=expected) from None
    return agent, model


async def _waited(runtime: Runtime, turn_id: str, wait: float) -> TurnRequest | None:
    if not wait:
        return None
    return await FinishedTurns.of(runtime).wait(runtime, turn_id, wait, just_queued=True)


@operation(
    body=models.ForkBody,
    responses={200: models.Forked, 202: models.Forked},
    errors=(400, 403, 404, 409),
)
async def fork(request: Request) -> Response:
    """Fork the turn's thread at this turn: a new thread, the turn run again on it."""
    runtime, caller = runtime_of(request), caller_of(request)
    turn = get_turn(runtime, caller, request.path_params["turn_id"])
    body = parse_body(
        models.ForkBody, await read_json(request, request.app.state.settings.max_body_bytes)
    )
    text = body.input
    agent, model = _choices(runtime, body.agent, body.model)
    wait = body.wait
    inbox = runtime.inbox
    assert inbox is not None
    try:
        forked = fork_thread(
            inbox,
            turn.thread_id,
            turn.id,
            owner=caller.owner,
            edit_input=text,
            agent=agent,
            model=model,
            channel="http",
            sender=caller.sender,
        )
    except NotThreadOwner as exc:
        raise not_yours(exc) from None
    except UsageError as exc:
        raise ApiError(409, str(exc), field="turn_id", expected="a turn that has ended") from None
    done = await _waited(runtime, forked.turn_id, wait)
    shown: dict[str, Any] = {"fork": attrs.asdict(forked)}
    if done is not None:
        shown["turn"] = turn_json(done, runtime)
    return ok(shown, 200 if done is not None and done.status.is_terminal else 202)


@operation(
    body=models.ReplayBody,
    responses={200: models.Replayed, 202: models.Replayed},
    errors=(400, 403, 404, 409),
)
async def replay(request: Request) -> Response:
    """Replay the turn against another model or agent; tools answered from the record.

    A call the record does not have is stopped unless ``allow_tools`` names its tool;
    the original turn and thread are not touched."""
    runtime, caller = runtime_of(request), caller_of(request)
    turn = get_turn(runtime, caller, request.path_params["turn_id"])
    body = parse_body(
        models.ReplayBody, await read_json(request, request.app.state.settings.max_body_bytes)
    )
    agent, model = _choices(runtime, body.agent, body.model)
    if agent is None and model is None:
        raise ApiError(
            400, "say what the replay runs against", field="model", expected="a model or agent"
        )
    allowed = body.allow_tools or []
    wait = body.wait
    inbox = runtime.inbox
    assert inbox is not None
    try:
        plan = plan_replay(
            inbox.store, turn.id, owner=caller.owner, model=model, agent=agent, allow_tools=allowed
        )
        replay_id = submit_replay(inbox, plan, channel="http", sender=caller.sender)
    except NotThreadOwner as exc:
        raise not_yours(exc) from None
    except TurnNotFound:
        raise ApiError(404, f"no turn request {turn.id!r}", field="turn_id") from None
    except UsageError as exc:
        raise ApiError(409, str(exc), field="turn_id", expected="a turn that has ended") from None
    done = await _waited(runtime, replay_id, wait)
    report = replay_report(inbox.store, plan, replay_id)
    terminal = done is not None and done.status.is_terminal
    return ok(report_json(report), 200 if terminal else 202)


def report_json(report: ReplayReport) -> dict[str, Any]:
    """A replay's report, its stopped calls listed apart."""
    shown = attrs.asdict(report)
    shown["stopped"] = [attrs.asdict(call) for call in report.stopped]
    return shown


def register(register_route: RegisterRoute) -> None:
    register_route("/api/turns/{turn_id}/fork", fork, methods=("POST",))
    register_route("/api/turns/{turn_id}/replay", replay, methods=("POST",))
