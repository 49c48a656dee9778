"""Tasks over HTTP (``toolang_register_routes``): list, show and add, on toolang-server.

Endpoints return plain values (sent as JSON) and refuse with the core's ``HttpError``,
so this plugin needs no web framework. A caller with a token (an owner) sees and adds
only tasks it requested; the local operator sees every task, as on the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from toolang_core import HttpError, UsageError, may_see

if TYPE_CHECKING:
    from toolang_core import RegisterRoute
    from toolang_source_task.tasks import Task, TaskBook

MAX_BODY = 100_000


def _book(request: Any) -> TaskBook:
    from toolang_source_task.tasks import TaskBook

    runtime = request.app.state.runtime
    if runtime.inbox is None:
        raise HttpError(503, "the runtime is not serving (starting or stopping)")
    return TaskBook(runtime.inbox.store)


def _visible(request: Any, task: Task) -> bool:
    return may_see(task.requester, request.state.caller.owner)


def _json(task: Task) -> dict[str, Any]:
    return {**attrs.asdict(task), "thread_id": task.thread_id}


async def list_tasks(request: Any) -> list[dict[str, Any]]:
    """Tasks, oldest first (all=true: done and cancelled ones too)."""
    show_all = request.query_params.get("all") in ("1", "true")
    return [
        _json(t)
        for t in _book(request).all()
        if _visible(request, t) and (show_all or t.status not in ("done", "cancelled"))
    ]


async def show_task(request: Any) -> dict[str, Any]:
    """One task."""
    ref = request.path_params["ref"]
    try:
        task = _book(request).get(ref)
    except UsageError:
        task = None
    if task is None or not _visible(request, task):
        raise HttpError(404, f"no task {ref!r}", field="ref", expected="the ref of a task")
    return _json(task)


async def add_task(request: Any) -> dict[str, Any]:
    """Add a task: {"title", "body", "ref"}; an agent takes it up on thread task:REF."""
    try:
        data = await request.json()
    except ValueError:
        raise HttpError(
            400, "the body is not JSON", field="body", expected="a JSON object"
        ) from None
    except RecursionError:  # nested past the JSON decoder's depth
        raise HttpError(
            400,
            "the body's JSON is nested too deeply to read",
            field="body",
            expected="a JSON object of title, body and ref",
        ) from None
    if not isinstance(data, dict):
        raise HttpError(400, "the body is not an object", field="body", expected="a JSON object")
    unknown = sorted(set(data) - {"title", "body", "ref"})
    if unknown:
        raise HttpError(
            400, f"unknown field {unknown[0]!r}", field=unknown[0], expected="title, body, ref"
        )
    for name, required in (("title", True), ("body", False), ("ref", False)):
        value = data.get(name)
        if (required and not (isinstance(value, str) and value.strip())) or (
            value is not None and (not isinstance(value, str) or len(value) > MAX_BODY)
        ):
            raise HttpError(
                400,
                f"{name} must be a {'non-empty ' if required else ''}string",
                field=name,
                expected=f"a string of at most {MAX_BODY} characters",
            )
    caller = request.state.caller
    try:
        task = _book(request).add(
            data["title"],
            body=data.get("body") or "",
            ref=data.get("ref"),
            requester=caller.owner or "owner",
            owner=caller.owner,  # its turns are the caller's, never the operator's
        )
    except (UsageError, ValueError) as exc:
        raise HttpError(
            409 if "exists" in str(exc) else 400,
            str(exc),
            field="ref",
            expected="a new, valid ref (or none)",
        ) from None
    return _json(task)


def register(register_route: RegisterRoute) -> None:
    register_route("/api/tasks", list_tasks)
    register_route("/api/tasks", add_task, methods=("POST",))
    register_route("/api/tasks/{ref}", show_task)
