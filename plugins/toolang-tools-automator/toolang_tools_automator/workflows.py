"""``workflow_save``, ``workflow_run``, ``workflow_status``, ``workflow_cancel``.

Workflows are saved per owner as records of kind ``workflow`` (the YAML and the
validated steps); a run copies the steps it starts with, so editing a workflow never
changes a run under way. See :mod:`toolang_tools_automator.engine` for how runs go.
"""

from __future__ import annotations

from typing import Any

from toolang_core import ToolCallContext, is_own
from toolang_tools_automator import engine
from toolang_tools_automator.common import (
    AutomatorError,
    call_digest,
    owner_digest,
    owner_of,
    runtime_of,
    settings_of,
)
from toolang_tools_automator.spec import WorkflowInvalid, parse_workflow

MAX_YAML = 64_000


def _public(view: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if not k.startswith("_")}


def workflow_save(
    name: str, yaml_content: str, context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Save (or replace) a workflow: a YAML pipeline of steps, each run by an agent as a
    task run once the steps it depends on completed.

    :param name: the workflow's name (lowercase letters, digits, '_', '-')
    :param yaml_content: the YAML: `steps:`, a list of {id, agent, instruction,
        depends_on, allowed_tools, timeout_seconds}
    """
    assert context is not None
    runtime = runtime_of(context)
    store = runtime.store
    assert store is not None
    owner = owner_of(context)

    def problem(agent: str, allowed: tuple[str, ...] | None) -> str | None:
        try:
            runtime.agents.scope(runtime.agents.agent(agent), allowed)
        except Exception as exc:
            return str(exc)
        return None

    try:
        workflow = parse_workflow(
            yaml_content, max_steps=settings_of(runtime).max_workflow_steps, check_agent=problem
        )
    except WorkflowInvalid as exc:
        raise AutomatorError(str(exc)) from None
    store.put_record(
        engine.DEFINITIONS,
        engine.state_key(owner_digest(owner), name),
        {
            "owner": owner,
            "name": name,
            "description": workflow.description,
            "yaml": yaml_content,
            "steps": [s.to_json() for s in workflow.steps],
        },
        now=runtime.clock(),
    )
    return {"name": name, "steps": workflow.order(), "saved": True}


async def workflow_run(
    name: str, input: str = "", context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Start a saved workflow; returns its run_id at once (steps run in the background).

    :param name: the workflow's name
    :param input: text every step is given with its instruction
    """
    assert context is not None
    runtime = runtime_of(context)
    store = runtime.store
    assert store is not None
    owner = owner_of(context)
    if context.spawn_depth > 0 and not runtime.config.delegation.nested_spawns:
        raise AutomatorError(
            "workflows cannot be started from a task run ([delegation] nested_spawns is off)"
        )
    saved = store.get_record(engine.DEFINITIONS, engine.state_key(owner_digest(owner), name))
    if saved is None:
        mine = sorted(
            str(r.data.get("name"))
            for r in store.list_records(engine.DEFINITIONS)
            if is_own(r.data.get("owner"), owner)
        )
        raise AutomatorError(
            f"name: no workflow {name!r} of yours (yours: {', '.join(mine) or 'none'})"
        )
    run_id = f"wf-{call_digest(context)}"
    if store.get_record(engine.RUNS, run_id) is None:  # else: this call, replayed
        store.put_record(
            engine.RUNS,
            run_id,
            {
                "owner": owner,
                "workflow": name,
                "input": input,
                "steps": saved.data["steps"],
                "status": engine.RUNNING,
                "parent_thread_id": context.thread_id,
                "parent_turn_id": context.turn_id,
                "created_at": runtime.clock(),
            },
            now=runtime.clock(),
            expect_revision=0,
        )
    view = await engine.advance(runtime, run_id)
    assert view is not None
    return _public(view)


def _record(context: ToolCallContext | None, run_id: str) -> Any:
    runtime = runtime_of(context)
    assert runtime.store is not None
    record = runtime.store.get_record(engine.RUNS, run_id)
    if record is None or not is_own(record.data.get("owner"), owner_of(context)):
        raise AutomatorError(f"run_id: no workflow run {run_id!r} of yours")
    return record


def workflow_status(run_id: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """The status of a workflow run and of each of its steps (with their results).

    :param run_id: the id workflow_run returned
    """
    record = _record(context, run_id)
    return _public(engine.inspect(runtime_of(context), record))


async def workflow_cancel(run_id: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """Cancel a workflow run: no further step starts and running steps are canceled.

    :param run_id: the id workflow_run returned
    """
    record = _record(context, run_id)
    return _public(await engine.cancel(runtime_of(context), record))
