"""Task runs and approvals over HTTP — owner-checked and decided exactly as on the CLI:
the same :class:`~toolang_core.TaskRunController` and :class:`~toolang_core.ApprovalBook`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolang_core import (
    Approval,
    ApprovalBook,
    ApprovalError,
    TaskRunError,
    TaskRunFilter,
    TaskRunNotFound,
    TaskRunStatus,
    redact,
)
from toolang_server import models
from toolang_server.api_turns import sees_turn
from toolang_server.auth import require_person
from toolang_server.http import (
    ApiError,
    Caller,
    caller_of,
    ok,
    read_json,
    runtime_of,
    store_of,
)
from toolang_server.openapi import operation
from toolang_server.schema import parse_body, parse_query

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from toolang_core import RegisterRoute, Runtime


def _run_not_found(run_id: str) -> ApiError:
    return ApiError(
        404,
        f"no task run with id {run_id!r}",
        field="run_id",
        expected="the id of one of your task runs (GET /api/task-runs)",
    )


@operation(query=models.RunQuery, responses={200: list[models.TaskRun]}, errors=(400,))
async def list_runs(request: Request) -> Response:
    """Task runs, newest first (an owner sees only its own)."""
    runtime, caller = runtime_of(request), caller_of(request)
    query = parse_query(models.RunQuery, request.query_params)
    found = runtime.task_runs.list(
        TaskRunFilter(
            owner=caller.owner,
            parent_thread_id=query.parent_thread_id,
            status=TaskRunStatus(query.status) if query.status else None,
            limit=query.limit,
        )
    )
    return ok([run.to_json() for run in found])


@operation(responses={200: models.TaskRun})
async def get_run(request: Request) -> Response:
    """One task run."""
    runtime, caller = runtime_of(request), caller_of(request)
    run_id = request.path_params["run_id"]
    try:
        return ok(runtime.task_runs.get(run_id, owner=caller.owner).to_json())
    except TaskRunNotFound:
        raise _run_not_found(run_id) from None


@operation(query=models.TranscriptQuery, responses={200: models.Transcript}, errors=(400, 404, 409))
async def run_transcript(request: Request) -> Response:
    """A task run's most recent transcript events (limit, default 40, at most 200)."""
    runtime, caller = runtime_of(request), caller_of(request)
    run_id = request.path_params["run_id"]
    try:
        transcript = runtime.task_runs.read_transcript(
            run_id,
            owner=caller.owner,
            limit=parse_query(models.TranscriptQuery, request.query_params).limit,
        )
    except TaskRunNotFound:
        raise _run_not_found(run_id) from None
    except TaskRunError as exc:
        raise ApiError(409, str(exc), field="run_id", expected="a run that has started") from None
    return ok(transcript)


@operation(query=models.WaitQuery, responses={200: models.TaskRun, 202: models.TaskRun})
async def wait_run(request: Request) -> Response:
    """Wait for a task run to finish (timeout seconds, default 30, at most 300)."""
    runtime, caller = runtime_of(request), caller_of(request)
    run_id = request.path_params["run_id"]
    timeout = parse_query(models.WaitQuery, request.query_params).timeout
    try:
        run = await runtime.task_runs.wait(run_id, owner=caller.owner, timeout=timeout)
    except TaskRunNotFound:
        raise _run_not_found(run_id) from None
    return ok(run.to_json(), 200 if run.status.is_terminal else 202)


@operation(responses={200: models.RunCanceled})
async def cancel_run(request: Request) -> Response:
    """Cancel a task run and the runs it spawned (a signed-in person only)."""
    runtime, caller = runtime_of(request), caller_of(request)
    run_id = request.path_params["run_id"]
    who = require_person(request, caller, "cancelling a task run")
    try:
        run, changed = await runtime.task_runs.cancel(
            run_id, owner=caller.owner, reason=f"canceled by {who}"
        )
    except TaskRunNotFound:
        raise _run_not_found(run_id) from None
    return ok({"run": run.to_json(), "changed": changed})


def _book(runtime: Runtime) -> ApprovalBook:
    return ApprovalBook(store_of(runtime))


def _approval_json(approval: Approval) -> dict[str, Any]:
    return {
        "id": approval.id,
        "tool": approval.tool,
        "params": redact(dict(approval.params)),
        "turn_id": approval.turn_id,
        "thread_id": approval.thread_id,
        "agent": approval.agent,
        "requester": approval.requester,
        "prompt": approval.prompt,
        "created_at": approval.created_at,
        "expires_at": approval.expires_at,
        "status": approval.status,
        "decided_at": approval.decided_at,
        "decided_by": approval.decided_by,
        "reason": approval.reason,
        "always": approval.always,
    }


def _mine(runtime: Runtime, caller: Caller, approval: Approval) -> bool:
    return sees_turn(runtime, caller, approval.turn_id)


@operation(query=models.ApprovalQuery, responses={200: list[models.Approval]}, errors=(400,))
async def list_approvals(request: Request) -> Response:
    """Approval requests, oldest first (status: pending, approved, denied, expired)."""
    runtime, caller = runtime_of(request), caller_of(request)
    status = parse_query(models.ApprovalQuery, request.query_params).status
    found = _book(runtime).list(status)  # type: ignore[arg-type]
    return ok([_approval_json(a) for a in found if _mine(runtime, caller, a)])


async def _decide(request: Request, approved: bool) -> Response:
    """Record a signed-in person's decision, attributed to their principal."""
    runtime, caller = runtime_of(request), caller_of(request)
    approval_id = request.path_params["approval_id"]
    who = require_person(request, caller, "approving" if approved else "denying")
    decision = parse_body(
        models.Decision, await read_json(request, request.app.state.settings.max_body_bytes)
    )
    reason, always = decision.reason, decision.always
    if always and not approved:
        raise ApiError(
            400,
            "always applies to approvals only",
            field="always",
            expected="false (or absent) when denying",
        )
    book = _book(runtime)
    try:
        approval = book.get(approval_id)
    except ApprovalError:
        approval = None
    if approval is None or not _mine(runtime, caller, approval):
        raise ApiError(
            404,
            f"no approval request with id {approval_id!r}",
            field="approval_id",
            expected="the id of a pending approval (GET /api/approvals)",
        )
    try:
        decided = book.decide(approval_id, approved=approved, by=who, reason=reason, always=always)
    except ApprovalError as exc:
        raise ApiError(
            409, str(exc), field="approval_id", expected="an approval request that is still pending"
        ) from None
    return ok(_approval_json(decided))


@operation(body=models.Decision, responses={200: models.Approval}, errors=(400, 404, 409))
async def approve(request: Request) -> Response:
    """Approve a pending tool call (a signed-in person only): it runs, its turn resumes.

    Loopback alone is no person: a caller without a credential gets 401."""
    return await _decide(request, True)


@operation(body=models.Decision, responses={200: models.Approval}, errors=(400, 404, 409))
async def deny(request: Request) -> Response:
    """Deny a pending tool call (a signed-in person only): the model is told.

    The turn goes on; loopback alone is no person: without a credential, 401."""
    return await _decide(request, False)


def register(register_route: RegisterRoute) -> None:
    register_route("/api/task-runs", list_runs)
    register_route("/api/task-runs/{run_id}", get_run)
    register_route("/api/task-runs/{run_id}/transcript", run_transcript)
    register_route("/api/task-runs/{run_id}/wait", wait_run)
    register_route("/api/task-runs/{run_id}/cancel", cancel_run, methods=("POST",))
    register_route("/api/approvals", list_approvals)
    register_route("/api/approvals/{approval_id}/approve", approve, methods=("POST",))
    register_route("/api/approvals/{approval_id}/deny", deny, methods=("POST",))
