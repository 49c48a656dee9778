"""``task_create``, ``task_get``, ``task_update``: agents create and change tasks.

The tools write the same task records as ``toolang tasks``; the task source then hands
each new revision to an agent on ``task:<ref>`` as it does for a person's edit. Scoped
in code, never by a parameter: a task belongs to the owner of the turn that created it
(its turns run as that owner's), and only that owner's turns see or change it. Safe to
replay: ``task_create`` keys the task by the call (turn id + call id) and
``task_update`` records the call it applied, so a resumed turn changes nothing twice.
A change made by the task's own turn (reporting ``doing``, ``done``) is not handed back
to it as new work.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import attrs

from toolang_core import Tool, ToolCallContext, is_own

if TYPE_CHECKING:
    from toolang_core import ExecutionStore, RuntimeView
    from toolang_source_task.tasks import Task, TaskBook

APPLIED = "source-task.applied"
"""Records of the ``task_update`` calls applied, keyed by the call."""
SOURCE = "task"
"""The turn source woken when a task changes."""
OWNER_ROLE = "automator"
"""The built-in role that owns these tools when no agent's prefix claims ``task_*``."""
TaskStatus = Literal["todo", "doing", "done", "cancelled"]


class TaskToolError(ValueError):
    """A task tool cannot do what it was asked; the message names the parameter."""


def _runtime(context: ToolCallContext | None) -> tuple[RuntimeView, ExecutionStore]:
    runtime = context.runtime if context is not None else None
    if runtime is None or runtime.store is None or context is None or context.turn is None:
        raise TaskToolError("the task tools run only inside a turn of a serving runtime")
    return runtime, runtime.store


def _owner(context: ToolCallContext) -> str | None:
    assert context.turn is not None
    return context.turn.owner


def _call_key(context: ToolCallContext) -> str:
    return hashlib.sha256(f"{context.turn_id}:{context.call_id}".encode()).hexdigest()[:20]


def _book(store: ExecutionStore, runtime: RuntimeView) -> TaskBook:
    from toolang_source_task.tasks import TaskBook

    return TaskBook(store, clock=runtime.clock)


def _due(due: str | None) -> float | None:
    if due is None or not due.strip():
        return None
    try:
        moment = datetime.fromisoformat(due.strip())
    except ValueError:
        raise TaskToolError(
            f"due: {due!r} is not an ISO 8601 date and time (e.g. 2026-12-01T09:00:00+00:00)"
        ) from None
    if moment.tzinfo is None:
        raise TaskToolError(f"due: {due!r} has no time zone (add +00:00 or Z)")
    return moment.timestamp()


def _agent(runtime: RuntimeView, agent: str | None) -> str | None:
    if agent is None or not agent.strip():
        return None
    try:
        return runtime.agents.delegate(agent.strip()).name
    except LookupError as exc:
        raise TaskToolError(f"agent: {exc}") from None


def _view(task: Task) -> dict[str, Any]:
    return {
        "task_id": task.ref,
        "title": task.title,
        "description": task.body,
        "status": task.status,
        "agent": task.agent,
        "due": datetime.fromtimestamp(task.due).astimezone().isoformat() if task.due else None,
        "revision": task.revision,
        "thread_id": task.thread_id,
        "paused": task.paused,
    }


def _own_task(context: ToolCallContext, book: TaskBook, task_id: str) -> Task:
    from toolang_core import UsageError

    try:
        task = book.get(task_id)
    except UsageError:
        task = None
    if task is None or not is_own(task.owner, _owner(context)):
        raise TaskToolError(f"task_id: no task {task_id!r} of yours")
    return task


def task_create(
    *,
    title: str,
    description: str = "",
    due: str | None = None,
    agent: str | None = None,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Create a task: durable work an agent takes up on its own thread (task:<task_id>).

    :param title: what the task is, in a line
    :param description: everything the agent working on it needs to know
    :param due: not before this time, ISO 8601 with a time zone (default: at once)
    :param agent: the agent that works on it (default: the default agent)
    """
    runtime, store = _runtime(context)
    assert context is not None
    if not title.strip():
        raise TaskToolError("title: empty; say what the task is")
    book = _book(store, runtime)
    ref = f"t-{_call_key(context)}"
    from toolang_core import UsageError

    try:
        earlier = book.get(ref)
    except UsageError:
        earlier = None
    if earlier is not None:  # this very call, replayed: the task exists already
        return {"created": False, **_view(earlier)}
    owner = _owner(context)
    task = book.add(
        title.strip(),
        body=description.strip(),
        ref=ref,
        requester=owner or "owner",
        owner=owner,
        agent=_agent(runtime, agent),
        due=_due(due),
    )
    runtime.wake_source(SOURCE)
    return {"created": True, **_view(task)}


def task_get(task_id: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """One of your tasks: title, description, status, agent, due time, revision.

    :param task_id: the task's id (from task_create)
    """
    runtime, store = _runtime(context)
    assert context is not None
    return _view(_own_task(context, _book(store, runtime), task_id))


def task_update(
    *,
    task_id: str,
    status: TaskStatus | None = None,
    title: str | None = None,
    description: str | None = None,
    due: str | None = None,
    agent: str | None = None,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Change one of your tasks: a new revision, which its agent takes up while the
    task is todo or doing (done and cancelled end it).

    :param task_id: the task's id (from task_create)
    :param status: "todo", "doing", "done" or "cancelled"
    :param title: a new title
    :param description: a new description
    :param due: a new due time, ISO 8601 with a time zone
    :param agent: another agent to work on it
    """
    runtime, store = _runtime(context)
    assert context is not None
    book = _book(store, runtime)
    task = _own_task(context, book, task_id)
    key = _call_key(context)
    applied = store.get_record(APPLIED, key)
    if applied is not None or task.changed_by == key:  # this very call, replayed
        return {"updated": False, **_view(task)}
    changes: dict[str, Any] = {}
    if status is not None:
        changes["status"] = status
    if title is not None:
        if not title.strip():
            raise TaskToolError("title: empty; give the new title or leave it out")
        changes["title"] = title.strip()
    if description is not None:
        changes["body"] = description.strip()
    if due is not None:
        changes["due"] = _due(due)
    if agent is not None:
        changes["agent"] = _agent(runtime, agent)
    if not changes:
        raise TaskToolError("nothing to change: give status, title, description, due or agent")
    updated = book.change(task.ref, **changes, changed_by=key)  # one write: the change and its call
    applied_now = {"ref": task.ref, "revision": updated.revision}
    store.put_record(APPLIED, key, applied_now, now=book.clock())
    if context.thread_id == task.thread_id:
        book.mark_handed(updated)  # its own turn's report, not new work for it
    else:
        runtime.wake_source(SOURCE)
    return {"updated": True, **_view(updated)}


def _tool(function: Any, **properties: dict[str, Any]) -> Tool:
    # keyed by the call (task_create, task_update) or a read (task_get): safe to re-run
    tool = Tool.from_function(function, owner=OWNER_ROLE, idempotent=True)
    schema = dict(tool.parameters)
    props = {name: dict(value) for name, value in schema["properties"].items()}
    for name, extra in properties.items():
        if "anyOf" in props[name]:  # an optional parameter: tighten its non-null branch
            props[name]["anyOf"] = [
                {**branch, **extra} if branch.get("type") != "null" else branch
                for branch in props[name]["anyOf"]
            ]
        else:
            props[name].update(extra)
    schema["properties"] = props
    return attrs.evolve(tool, parameters=schema)


TASK_ID = {"pattern": r"^[a-z0-9][a-z0-9-]{0,63}$"}
AGENT = {"pattern": r"^[a-z][a-z0-9_-]{0,63}$"}
TITLE = {"maxLength": 500}
TEXT = {"maxLength": 20_000}
DUE = {"maxLength": 64}

TOOLS = (
    _tool(task_create, title={**TITLE, "minLength": 1}, description=TEXT, due=DUE, agent=AGENT),
    _tool(task_get, task_id=TASK_ID),
    _tool(task_update, task_id=TASK_ID, title=TITLE, description=TEXT, due=DUE, agent=AGENT),
)
"""The task tools with their JSON Schemas (tightened: lengths and patterns)."""
