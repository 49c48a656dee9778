"""Running workflows: each step a task run on the runtime's one controller.

A run is a record of kind ``workflow.run`` in the execution store (the steps it was
started with, its input, owner and status). Which steps ran, run or failed is never
copied into it: it is read from the task runs themselves, whose ids are fixed by the
run and the step (``<run id>-<step id>``). :func:`advance` is therefore idempotent and
safe to call from anywhere at any time — the step that finished (the task-run
observer), the periodic reconcile, a restarted runtime: it spawns each step whose
dependencies completed, a spawn that already happened is refused by the controller
(``TaskRunExists``), and so no step ever runs twice.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import structlog

from toolang_core import SpawnRequest, TaskRun, TaskRunExists, TaskRunNotFound
from toolang_core.store import RecordConflict
from toolang_tools_automator.spec import Step

if TYPE_CHECKING:
    from toolang_core import Record, RuntimeView

log = structlog.get_logger("toolang.plugins.tools-automator")

RUNS = "workflow.run"
DEFINITIONS = "workflow"
RUNNING, COMPLETED, FAILED, CANCELED = "running", "completed", "failed", "canceled"
RESULT_CHARS = 4_000


def step_run_id(run_id: str, step_id: str) -> str:
    return f"{run_id}-{step_id.replace('_', '-')}"


def _steps(record: Record) -> list[Step]:
    return [Step.from_json(s) for s in record.data["steps"]]


def inspect(runtime: RuntimeView, record: Record) -> dict[str, Any]:
    """The run as its owner sees it: its status and each step's (read only)."""
    controller = runtime.task_runs
    owner = str(record.data["owner"])
    steps = _steps(record)
    views: dict[str, TaskRun] = {}
    status: dict[str, str] = {}
    for step in _ordered(steps):
        # A step is spawned only once its dependencies completed: only then can it
        # have a task run to look up (this keeps an advance cheap on long pipelines).
        if all(status.get(d) == COMPLETED for d in step.depends_on):
            with contextlib.suppress(TaskRunNotFound):  # not spawned yet
                views[step.id] = controller.get(step_run_id(record.key, step.id), owner=owner)
        if step.id in views:
            status[step.id] = str(views[step.id].status)
        elif record.data["status"] == CANCELED:
            status[step.id] = CANCELED
        elif any(status.get(d) in (FAILED, CANCELED, "skipped") for d in step.depends_on):
            status[step.id] = "skipped"
        elif all(status.get(d) == COMPLETED for d in step.depends_on):
            status[step.id] = "ready"
        else:
            status[step.id] = "waiting"
    return {
        "run_id": record.key,
        "workflow": record.data["workflow"],
        "status": record.data["status"],
        "steps": [
            {
                "id": s.id,
                "agent": s.agent,
                "status": status[s.id],
                "task_id": views[s.id].id if s.id in views else None,
                "result": views[s.id].result[:RESULT_CHARS] if s.id in views else None,
                "error": (views[s.id].error or None) if s.id in views else None,
            }
            for s in steps
        ],
        "_views": views,
    }


def _ordered(steps: list[Step]) -> list[Step]:
    done: set[str] = set()
    out: list[Step] = []
    left = list(steps)
    while left:
        ready = [s for s in left if set(s.depends_on) <= done]
        if not ready:  # validated acyclic; never loop for ever on a bad record
            return out + left
        out += ready
        done |= {s.id for s in ready}
        left = [s for s in left if s.id not in done]
    return out


def _task(record: Record, step: Step, views: dict[str, TaskRun]) -> str:
    parts = [
        f"You are running step {step.id!r} of workflow {record.data['workflow']!r}.",
        step.instruction,
    ]
    if record.data.get("input"):
        parts.append(f"Workflow input:\n{record.data['input']}")
    for dep in step.depends_on:
        parts.append(f"Result of step {dep!r}:\n{views[dep].result[:RESULT_CHARS]}")
    return "\n\n".join(parts)


async def advance(runtime: RuntimeView, run_id: str) -> dict[str, Any] | None:
    """Spawn the steps of run ``run_id`` that may start, or settle its status when every
    step ended. Returns the run's view (``None`` for an unknown run)."""
    from toolang_tools_automator.common import settings_of

    store = runtime.store
    assert store is not None
    record = store.get_record(RUNS, run_id)
    if record is None:
        return None
    view = inspect(runtime, record)
    if record.data["status"] != RUNNING:
        return view
    states = {s["id"]: s["status"] for s in view["steps"]}
    in_flight = sum(
        1 for s in states.values() if s in ("queued", "running", "finalizing", "canceling")
    )
    room = settings_of(runtime).max_parallel_steps - in_flight
    spawned = False
    for step in _steps(record):
        if room <= 0:
            break
        if states[step.id] != "ready":
            continue
        try:
            await runtime.task_runs.spawn(
                SpawnRequest(
                    owner=str(record.data["owner"]),
                    parent_thread_id=str(record.data["parent_thread_id"]),
                    task=_task(record, step, view["_views"]),
                    agent_name=step.agent,
                    timeout_seconds=step.timeout_seconds,
                    allowed_tools=step.allowed_tools,
                    spawn_reason=f"workflow {record.data['workflow']} step {step.id}",
                    metadata={"workflow_run": run_id, "workflow_step": step.id},
                    id=step_run_id(run_id, step.id),
                )
            )
            spawned = True
        except TaskRunExists:
            pass  # spawned already (by another advance): never twice
        room -= 1
    if spawned:
        return inspect(runtime, store.get_record(RUNS, run_id) or record)
    ended = [s for s in states.values() if s in (COMPLETED, FAILED, CANCELED, "skipped")]
    if len(ended) == len(states):
        final = COMPLETED if all(s == COMPLETED for s in states.values()) else FAILED
        # A conflict: changed meanwhile (a cancel, another advance): theirs stands.
        with contextlib.suppress(RecordConflict):
            store.put_record(
                RUNS,
                run_id,
                {**record.data, "status": final, "finished_at": runtime.clock()},
                now=runtime.clock(),
                expect_revision=record.revision,
            )
        log.info("workflow.finished", run=run_id, status=final)
        return inspect(runtime, store.get_record(RUNS, run_id) or record)
    return view


async def reconcile(runtime: RuntimeView) -> None:
    """Advance every unfinished run (at start-up and every ``reconcile_seconds``)."""
    store = runtime.store
    if store is None:
        return
    for record in store.list_records(RUNS):
        if record.data.get("status") == RUNNING:
            try:
                await advance(runtime, record.key)
            except Exception as exc:  # one broken run never stops the others
                log.warning("workflow.advance_failed", run=record.key, error=str(exc))


async def cancel(runtime: RuntimeView, record: Record) -> dict[str, Any]:
    """Cancel the run: no step starts any more and the running ones are canceled."""
    store = runtime.store
    assert store is not None
    if record.data["status"] == RUNNING:
        with contextlib.suppress(RecordConflict):  # ended meanwhile: that stands
            store.put_record(
                RUNS,
                record.key,
                {**record.data, "status": CANCELED, "finished_at": runtime.clock()},
                now=runtime.clock(),
                expect_revision=record.revision,
            )
    current = store.get_record(RUNS, record.key) or record
    for run in inspect(runtime, current)["_views"].values():
        if not run.status.is_terminal:
            await runtime.task_runs.cancel(run.id, owner=str(current.data["owner"]))
    return inspect(runtime, current)


def state_key(owner_digest: str, name: str) -> str:
    return f"{owner_digest}.{name}"
