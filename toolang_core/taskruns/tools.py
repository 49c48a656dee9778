"""The task-run tools models use: ``start_task_run``, ``list_task_runs``,
``get_task_run``, ``cancel_task_run``, ``wait_task_run``, ``read_task_run_transcript``.

Thin wrappers over the runtime's :class:`~toolang_core.taskruns.controller.
TaskRunController`; the caller's identity (owner, parent thread and turn) comes from
the call's context. Runs of another owner are "not found"; ``list_task_runs`` and
``read_task_run_transcript`` also stay within the calling thread. Each is an ordinary
tool: every call passes the whole tool-hook chain.
"""

from __future__ import annotations

from typing import Any

from toolang_core.agents.routing import reroute_hint
from toolang_core.taskruns.spawning import (
    controller_of,
    current_turn,
    run_id_of,
    spawn_child,
    wait_budget,
)
from toolang_core.taskruns.types import TaskRun, TaskRunError, TaskRunFilter, TaskRunStatus
from toolang_core.tools.types import ToolCallContext  # the hints make the schema

MODES = ("async", "sync")


async def start_task_run(
    *,
    task: str,
    agent_name: str = "",
    mode: str = "async",
    timeout_seconds: float = 0,
    wait_timeout_seconds: float = 0,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Start one task run: background work by an agent on its own thread, with a run id
    you can check, wait for or cancel. Async by default (returns the queued run at
    once); mode=sync waits until it finishes.

    :param task: what the agent should do, complete and self-contained
    :param agent_name: the agent to run it (default: the default agent)
    :param mode: "async" (default) or "sync"
    :param timeout_seconds: limits the run itself, from its start (0: no limit)
    :param wait_timeout_seconds: sync only: how long to wait; the run goes on after it
    """
    controller_of(context)
    normal = mode.strip().lower() or "async"
    if normal not in MODES:
        raise TaskRunError(f'taskrun: unsupported mode "{mode}"')
    run = await spawn_child(
        context,
        task=task,
        agent_name=agent_name,
        timeout_seconds=float(timeout_seconds) if timeout_seconds > 0 else None,
    )
    if normal == "async":
        return run.to_json()
    return await _wait(context, run.id, wait_timeout_seconds)


def list_task_runs(context: ToolCallContext | None = None) -> dict[str, Any]:
    """List the task runs started from this conversation, newest first."""
    controller = controller_of(context)
    turn = current_turn(context)
    assert context is not None
    runs = controller.list(TaskRunFilter(owner=turn.owner, parent_thread_id=context.thread_id))
    return {"runs": [run.to_json() for run in runs]}


def get_task_run(id: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """Get one task run: its status, summary, result, error and progress.

    :param id: the run id
    """
    controller = controller_of(context)
    turn = current_turn(context)
    return controller.get(run_id_of(id), owner=turn.owner).to_json()


async def cancel_task_run(id: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """Cancel one task run (best effort): a queued run is canceled at once, a running
    one is asked to stop; a finished run is left as it is.

    :param id: the run id
    """
    controller = controller_of(context)
    turn = current_turn(context)
    run, _changed = await controller.cancel(
        run_id_of(id),
        owner=turn.owner,
        reason=f"canceled by agent {context.agent if context else '?'}",
    )
    return run.to_json()


async def wait_task_run(
    id: str,
    timeout_seconds: float = 0,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Wait for a task run to finish and return it. When the wait times out, the run's
    current state is returned (with wait_timed_out) and the run goes on.

    :param id: the run id
    :param timeout_seconds: how long to wait at most (0: as long as a tool call may last)
    """
    return await _wait(context, run_id_of(id), timeout_seconds)


def read_task_run_transcript(
    id: str,
    limit: int = 0,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Read the recent events of a task run started from this conversation: the task,
    the agent's answers and its tool calls. Defaults to 40 events, capped at 200.

    :param id: the run id
    :param limit: how many of the most recent events (0: 40)
    """
    controller = controller_of(context)
    turn = current_turn(context)
    assert context is not None
    transcript = controller.read_transcript(
        run_id_of(id), owner=turn.owner, parent_thread_id=context.thread_id, limit=limit
    )
    return transcript.to_json()


async def _wait(context: ToolCallContext | None, run_id: str, timeout: float) -> dict[str, Any]:
    controller = controller_of(context)
    turn = current_turn(context)
    with turn.waiting():
        run = await controller.wait(run_id, owner=turn.owner, timeout=wait_budget(context, timeout))
    data = run.to_json()
    if not run.status.is_terminal:
        data["wait_timed_out"] = True
    elif (hint := failed_hint(run, context)) is not None:
        data["reroute_hint"] = hint
    return data


def failed_hint(run: TaskRun, context: ToolCallContext | None) -> str | None:
    """The reroute hint for a run whose agent failed (not one the caller canceled)."""
    if run.status is not TaskRunStatus.FAILED:
        return None
    agent = run.agent_name or (
        context.runtime.config.agents.default if context and context.runtime else "?"
    )
    return reroute_hint(agent, run.error or run.outcome or "failed")


TOOLS = (
    start_task_run,
    list_task_runs,
    get_task_run,
    cancel_task_run,
    wait_task_run,
    read_task_run_transcript,
)
