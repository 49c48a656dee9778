"""The teammate tools: ``agent_spawn``, ``agent_wait``, ``agent_stop``.

Lango's teammate surface, over the **same** task-run controller as ``start_task_run``
(an ``agent_id`` is a task-run id): a spawned teammate really runs — admitted by the
scheduler, limited (nesting, depth, fan-out, its timeout, a tool scope that only
narrows) and visible (``toolang tasks runs``, ``toolang status``).
"""

from __future__ import annotations

from typing import Any

from toolang_core.taskruns.spawning import (
    controller_of,
    current_turn,
    run_id_of,
    runtime_of,
    spawn_child,
    wait_budget,
)
from toolang_core.taskruns.tools import failed_hint
from toolang_core.taskruns.types import TaskRun, TaskRunError
from toolang_core.tools.types import ToolCallContext  # the hints make the schema


async def agent_spawn(
    *,
    instruction: str,
    agent: str = "",
    allowed_tools: list[str] | None = None,
    spawn_reason: str = "",
    timeout: float = 0,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Spawn a teammate: an agent that works on INSTRUCTION in the background, on its
    own thread. Returns its agent_id at once; use agent_wait for its result and
    agent_stop to stop it.

    :param instruction: the complete task for the teammate (required)
    :param agent: the teammate type: an agent name, e.g. "operator" (default: the
        default agent)
    :param allowed_tools: narrow the teammate to these tools (names or prefix*); never
        more than its role allows
    :param spawn_reason: why this teammate is needed (recorded with the run)
    :param timeout: limits the teammate's run, in seconds (0: [delegation]
        default_timeout_seconds)
    """
    if not instruction.strip():
        raise TaskRunError("agent_spawn: instruction is required")
    limit = (
        timeout if timeout > 0 else runtime_of(context).config.delegation.default_timeout_seconds
    )
    run = await spawn_child(
        context,
        task=instruction,
        agent_name=agent,
        timeout_seconds=float(limit),
        allowed_tools=allowed_tools,
        spawn_reason=spawn_reason,
    )
    return {
        "agent_id": run.id,
        "status": run.status.value,
        "agent": run.agent_name or runtime_of(context).config.agents.default,
        "allowed_tools": list(run.allowed_tools) if run.allowed_tools is not None else None,
        "timeout_seconds": run.timeout_seconds,
    }


async def agent_wait(
    agent_id: str, timeout: float = 300, context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Wait for a teammate to finish and return its result. Returns early when the
    teammate waits for a person's approval; after TIMEOUT returns its current status
    (timeout: true) and the teammate goes on.

    :param agent_id: the id agent_spawn returned
    :param timeout: seconds to wait at most
    """
    controller = controller_of(context)
    turn = current_turn(context)
    with turn.waiting():
        run = await controller.wait(
            run_id_of(agent_id),
            owner=turn.owner,
            timeout=wait_budget(context, timeout),
            until_blocked=True,
        )
    data = _teammate(run)
    if (hint := failed_hint(run, context)) is not None:
        data["reroute_hint"] = hint
    return data


async def agent_stop(agent_id: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """Stop a teammate. A teammate that already finished is left as it is.

    :param agent_id: the id agent_spawn returned
    """
    controller = controller_of(context)
    turn = current_turn(context)
    by = context.agent if context is not None else "?"
    run, changed = await controller.cancel(
        run_id_of(agent_id), owner=turn.owner, reason=f"stopped by agent {by}"
    )
    return {"agent_id": run.id, "status": run.status.value, "stopped": changed}


def _teammate(run: TaskRun) -> dict[str, Any]:
    data: dict[str, Any] = {"agent_id": run.id, "status": run.status.value}
    if run.status.is_terminal:
        data |= {"result": run.result, "summary": run.summary, "error": run.error}
        if run.outcome:
            data["outcome"] = run.outcome
        return data
    if run.awaiting_approval is not None:
        data["blocked"] = "awaiting_approval"
        data["awaiting_approval"] = wait = run.awaiting_approval.to_json()
        data |= {k: wait[k] for k in ("grant_request_id", "grant_attempt", "grant_state")}
        return data
    data["timeout"] = True
    return data


TOOLS = (agent_spawn, agent_wait, agent_stop)
