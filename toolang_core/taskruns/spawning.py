"""What the model-facing task-run and teammate tools share: who is calling, the spawn
limits, and spawning a child of the calling turn.

The caller's identity comes from the call's context, never from a parameter: the owner
is the turn's owner (else its sender), the parent thread and turn are the call's. The
limits are checked in this order, before anything is stored:

1. nested spawns — a call made inside a task run or an ``ask_agent`` specialist is
   refused unless ``[delegation] nested_spawns`` is on;
2. depth — the child may not be deeper than ``[delegation] max_spawn_depth``;
3. fan-out — one turn starts at most ``[delegation] max_spawns_per_turn`` runs;
4. the agent exists and is active, and ``allowed_tools`` lies within its scope.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, cast

from toolang_core.agents.catalog import AgentError
from toolang_core.agents.partition import PatternError, ToolScopeError
from toolang_core.store.types import TurnFilter
from toolang_core.taskruns import view
from toolang_core.taskruns.types import SOURCE, SpawnRequest, TaskRun, TaskRunError

if TYPE_CHECKING:
    from toolang_core.runtime_parts import CoreRuntime
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.taskruns.controller import TaskRunController
    from toolang_core.tools.turn_handle import TurnHandle
    from toolang_core.tools.types import ToolCallContext

WAIT_MARGIN = 0.9
"""A wait inside a tool call ends at this share of ``[tools] timeout_seconds``, so the
tool returns the run's view instead of being cut off by the chain's timeout."""


def runtime_of(context: ToolCallContext | None) -> RuntimeView:
    if context is None:
        raise TaskRunError("taskrun: controller unavailable")
    return context.runtime


def controller_of(context: ToolCallContext | None) -> TaskRunController:
    """The serving runtime's controller. :raises TaskRunError: outside a runtime."""
    runtime = runtime_of(context)
    try:
        # The view types it as the TaskRuns protocol; the runtime's is this package's
        # controller, whose runtime (the core's) the spawning checks read.
        return cast("TaskRunController", runtime.task_runs)
    except RuntimeError:
        raise TaskRunError("taskrun: controller unavailable") from None


def current_turn(context: ToolCallContext | None) -> TurnHandle:
    """The turn the call belongs to. :raises TaskRunError: outside an agent turn."""
    if context is None or context.turn is None:
        raise TaskRunError("taskrun: current turn context is unavailable")
    return context.turn


def run_id_of(value: str) -> str:
    run_id = value.strip()
    if not run_id:
        raise TaskRunError("taskrun: empty run id")
    return run_id


def check_nesting(context: ToolCallContext) -> int:
    """The depth a child of this call would have. :raises TaskRunError: (limits 1-2)"""
    settings = runtime_of(context).config.delegation
    if context.spawn_depth > 0 and not settings.nested_spawns:
        raise TaskRunError("taskrun: nested task runs are not supported")
    depth = context.spawn_depth + 1
    if depth > settings.max_spawn_depth:
        raise TaskRunError(
            f"taskrun: spawn depth limit reached (a child here would be at depth {depth}; "
            f"[delegation] max_spawn_depth = {settings.max_spawn_depth})"
        )
    return depth


def check_fan_out(controller: TaskRunController, context: ToolCallContext) -> None:
    """:raises TaskRunError: when the turn already started its share of runs."""
    limit = controller.runtime.config.delegation.max_spawns_per_turn
    children = controller.store.list_turns(
        TurnFilter(parent=context.turn_id, source=SOURCE, limit=limit + 1)
    )
    started = sum(1 for turn in children if view.is_task_run(turn))
    if started >= limit:
        raise TaskRunError(
            f"taskrun: fan-out limit reached: turn {context.turn_id} already started "
            f"{started} task run(s) ([delegation] max_spawns_per_turn = {limit}); wait for "
            "them or answer with what you have"
        )


def check_agent(
    runtime: CoreRuntime, agent_name: str, allowed_tools: Sequence[str] | None
) -> str | None:
    """The agent's name (``None``: the default agent), checked to exist and to cover
    ``allowed_tools``. :raises TaskRunError:"""
    name = agent_name.strip() or None
    try:
        agents = runtime.agents
        agent = agents.agent(None) if name is None else agents.delegate(name)
        runtime.agents.scope(agent, allowed_tools)
    except (AgentError, ToolScopeError, PatternError) as exc:
        raise TaskRunError(f"taskrun: {exc}") from None
    return name


async def spawn_child(
    context: ToolCallContext | None,
    *,
    task: str,
    agent_name: str = "",
    timeout_seconds: float | None = None,
    allowed_tools: Sequence[str] | None = None,
    spawn_reason: str | None = None,
    metadata: Mapping[str, str] | None = None,
    key: str | None = None,
) -> TaskRun:
    """Spawn a task run as a child of the calling turn, every limit checked first.

    Keyed (``key``; default: the call's idempotency key): the same call made again — a
    turn resumed after a crash finds it in doubt and runs it again — gets the run it
    spawned the first time, whatever became of it, and spawns nothing. A tool that
    starts several runs in one call gives each its own key (e.g. the call's key and a
    number); ``key=""`` spawns without one."""
    controller = controller_of(context)
    turn = current_turn(context)
    assert context is not None
    depth = check_nesting(context)
    if not task.strip():
        raise TaskRunError("taskrun: empty task")
    key = (context.idempotency_key if key is None else key) or None
    if key is not None:
        earlier = controller.child_by_key(context.turn_id, key, owner=turn.owner)
        if earlier is not None:
            return earlier
    check_fan_out(controller, context)
    name = check_agent(controller.runtime, agent_name, allowed_tools)
    return await controller.spawn(
        SpawnRequest(
            owner=turn.owner,
            parent_thread_id=context.thread_id,
            parent_turn_id=context.turn_id,
            task=task,
            agent_name=name,
            timeout_seconds=timeout_seconds,
            allowed_tools=tuple(allowed_tools) if allowed_tools is not None else None,
            # a narrowed child escalates at most to what its parent has (turn.escalation)
            tool_ceiling=(
                tuple(sorted(context.allowed_tools))
                if allowed_tools is not None and context.allowed_tools is not None
                else None
            ),
            spawn_depth=depth,
            spawn_reason=spawn_reason or None,
            sender=turn.request.sender,
            metadata=dict(metadata or {}),
            key=key,
        )
    )


spawn_task_run = spawn_child
"""Public (``toolang_core.spawn_task_run``): tools of plugins that start task runs for
the calling turn (e.g. the automator's ``bg_submit``) get every limit checked here."""


def wait_budget(context: ToolCallContext | None, requested: float | None) -> float:
    """How long a wait inside this tool call may last: ``requested`` (``None`` or ≤ 0:
    as long as allowed), never past the chain's tool timeout."""
    ceiling = runtime_of(context).config.tools.timeout_seconds * WAIT_MARGIN
    if requested is None or requested <= 0:
        return ceiling
    return min(requested, ceiling)
