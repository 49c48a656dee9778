"""``bg_submit``, ``bg_status``, ``bg_result``, ``bg_cancel``: thin views over task runs.

``bg_submit`` spawns a task run exactly as ``start_task_run`` does (the same nesting,
depth, fan-out and agent checks, through :func:`toolang_core.spawn_task_run`); the
others read and cancel runs through the runtime's controller with the calling turn's
owner, so another owner's run is "not found".
"""

from __future__ import annotations

from typing import Any

from toolang_core import TaskRun, TaskRunError, TaskRunNotFound, ToolCallContext, spawn_task_run
from toolang_tools_automator.common import AutomatorError, owner_of, runtime_of


def _controller(context: ToolCallContext | None) -> Any:
    try:
        return runtime_of(context).task_runs
    except RuntimeError as exc:
        raise AutomatorError(str(exc)) from None


def _get(context: ToolCallContext | None, task_id: str) -> TaskRun:
    try:
        run: TaskRun = _controller(context).get(task_id, owner=owner_of(context))
    except TaskRunNotFound:
        raise AutomatorError(f"task_id: no background task {task_id!r} of yours") from None
    return run


def _status(run: TaskRun) -> dict[str, Any]:
    return {
        "task_id": run.id,
        "status": str(run.status),
        "agent": run.agent_name,
        "summary": run.summary,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
    }


async def bg_submit(
    prompt: str, agent: str | None = None, context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Run a prompt in the background as a task run; returns its task_id at once.

    :param prompt: what to do, complete and self-contained
    :param agent: the agent to run it (default: the default agent)
    """
    try:
        run = await spawn_task_run(
            context, task=prompt, agent_name=agent or "", spawn_reason="bg_submit"
        )
    except TaskRunError as exc:
        raise AutomatorError(str(exc).removeprefix("taskrun: ")) from None
    return _status(run)


def bg_status(task_id: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """The status of one of your background tasks.

    :param task_id: the id bg_submit returned
    """
    return _status(_get(context, task_id))


def bg_result(task_id: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """The result of one of your background tasks (or that it is not finished yet).

    :param task_id: the id bg_submit returned
    """
    run = _get(context, task_id)
    if not run.status.is_terminal:
        return {"task_id": run.id, "status": str(run.status), "finished": False}
    return {
        "task_id": run.id,
        "status": str(run.status),
        "finished": True,
        "result": run.result,
        "error": run.error or None,
        "outcome": run.outcome,
    }


async def bg_cancel(task_id: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """Cancel one of your background tasks (and the task runs it started).

    :param task_id: the id bg_submit returned
    """
    _get(context, task_id)
    run, changed = await _controller(context).cancel(task_id, owner=owner_of(context))
    return {**_status(run), "canceled": changed}
