"""task_create, task_get, task_update: agents create and change tasks, which the task
source hands to their agent by revision (Lango: "task_create requires title; task_get
requires task_id; task_update requires task_id")."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

import toolang_source_task as plugin
from toolang_core import AgentDefinition, ToolCall, TurnStatus
from toolang_core.store.types import TurnFilter
from toolang_core.testing.cast import Cast
from toolang_core.testing.delegation import make_runtime, results, run_turn
from toolang_core.testing.models import text, tool_call
from toolang_core.testing.runtimes import serving, tool_call_context
from toolang_source_task.tasks import TaskBook
from toolang_source_task.tools import TaskToolError, task_create, task_update

ASSISTANT = AgentDefinition(name="assistant", tools=("task_*",))
WRITER = AgentDefinition(name="writer", tools=("task_update",), description="writes")
CREATE = {"title": "Write the notes", "description": "Cover the scheduler.", "agent": "writer"}


def task_ref(request):
    return re.search(r"^Task (t-[0-9a-f]+):", request.messages[-1].content, re.M).group(1)


def runtime_with(tmp_path, cast):
    return make_runtime(
        tmp_path, cast, agents=(ASSISTANT, WRITER), plugins=[("source-task", plugin)]
    )


def hand_over(runtime):
    """What the task source does on each poll, then serve what it placed."""
    store = runtime.open_store()
    try:
        handed = TaskBook(store, clock=runtime.clock).submit_due(runtime.open_inbox())
    finally:
        store.close()
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    return handed


def test_an_agent_creates_a_task_its_agent_takes_up_and_finishes(tmp_path):
    cast = Cast(
        assistant=[tool_call("task_create", CREATE), text("created")],
        writer=[
            lambda request: tool_call(
                "task_update", {"task_id": task_ref(request), "status": "done"}
            ),
            text("written"),
        ],
    )
    runtime = runtime_with(tmp_path, cast)
    run_turn(runtime, "make a task", owner="alice")
    (created,) = results(cast)
    task = created["output"]
    assert (task["created"], task["status"], task["agent"]) == (True, "todo", "writer")
    assert hand_over(runtime) == [task["task_id"]]
    store = runtime.open_store()
    (turn,) = store.list_turns(TurnFilter(thread_id=task["thread_id"]))
    assert (turn.status, turn.source, turn.agent, turn.owner) == (
        TurnStatus.COMPLETED,
        "task",
        "writer",
        "alice",  # the task's turns are its creator's owner's
    )
    assert turn.input == f"Task {task['task_id']}: Write the notes\n\nCover the scheduler."
    (updated,) = results(cast, "writer")
    assert (updated["output"]["status"], updated["output"]["revision"]) == ("done", 2)
    # the task's own report is not handed back to it as new work
    assert hand_over(runtime) == []
    assert len(store.list_turns(TurnFilter(thread_id=task["thread_id"]))) == 1


def test_another_owner_can_neither_see_nor_change_the_task(tmp_path):
    cast = Cast(assistant=[tool_call("task_create", CREATE), text("created")])
    runtime = runtime_with(tmp_path, cast)
    run_turn(runtime, "make a task", owner="alice")
    task_id = results(cast)[0]["output"]["task_id"]
    cast.scripts["assistant"] = [
        tool_call("task_get", {"task_id": task_id}, call_id="g"),
        tool_call("task_update", {"task_id": task_id, "status": "cancelled"}, call_id="u"),
        text("no"),
    ]
    run_turn(runtime, "peek", thread="chat:bob", owner="bob")
    got, changed = results(cast)[-2:]
    for refused in (got, changed):
        assert refused["ok"] is False
        assert f"task_id: no task {task_id!r} of yours" in refused["error"]
    store = runtime.open_store()
    assert TaskBook(store).get(task_id).status == "todo"


def test_a_change_by_another_turn_is_a_new_revision_handed_to_its_agent(tmp_path):
    cast = Cast(assistant=[tool_call("task_create", CREATE), text("created")], writer=[text("1")])
    runtime = runtime_with(tmp_path, cast)
    run_turn(runtime, "make a task", owner="alice")
    task_id = results(cast)[0]["output"]["task_id"]
    hand_over(runtime)
    cast.scripts["assistant"] = [
        tool_call("task_update", {"task_id": task_id, "description": "Also the store."}),
        text("changed"),
    ]
    run_turn(runtime, "change it", owner="alice")
    assert results(cast)[-1]["output"]["revision"] == 2
    assert hand_over(runtime) == [task_id]
    store = runtime.open_store()
    inputs = [t.input for t in store.list_turns(TurnFilter(thread_id=f"task:{task_id}"))]
    assert sorted(i.rsplit("\n", 1)[-1] for i in inputs) == [
        "Also the store.",  # revision 2, handed to the writer again
        "Cover the scheduler.",
    ]


def test_a_due_time_holds_the_task_until_then(tmp_path):
    due = "2100-01-01T09:00:00+00:00"
    cast = Cast(assistant=[tool_call("task_create", {"title": "Later", "due": due}), text("ok")])
    runtime = runtime_with(tmp_path, cast)
    run_turn(runtime, "later", owner="alice")
    task_id = results(cast)[0]["output"]["task_id"]
    store = runtime.open_store()
    TaskBook(store).submit_due(runtime.open_inbox())
    (turn,) = store.list_turns(TurnFilter(thread_id=f"task:{task_id}"))
    assert turn.not_before == datetime(2100, 1, 1, 9, tzinfo=UTC).timestamp()
    assert turn.status is TurnStatus.QUEUED


def call_context(runtime, tool, call_id="c1", owner="alice"):
    """The context of call ``call_id`` of turn ``turn-1`` (owner ``owner``), as the
    runtime hands it to the tool — again, for a call it replays."""
    return tool_call_context(
        runtime,
        tool,
        call=ToolCall(call_id, tool, {}),
        turn_id="turn-1",
        turn=SimpleNamespace(owner=owner),
    )


async def replayed_calls(runtime):
    async with serving(runtime, sources=()):
        context = call_context(runtime, "task_create")
        first = task_create(title="Once", context=context)
        again = task_create(title="Once", context=context)
        change = call_context(runtime, "task_update", "c2")
        changed = task_update(task_id=first["task_id"], title="Twice?", context=change)
        replayed = task_update(task_id=first["task_id"], title="Twice?", context=change)
    return first, again, changed, replayed


def test_a_replayed_call_creates_and_changes_nothing_twice(tmp_path):
    runtime = runtime_with(tmp_path, Cast())
    first, again, changed, replayed = asyncio.run(replayed_calls(runtime))
    assert (first["created"], again["created"]) == (True, False)
    assert first["task_id"] == again["task_id"]
    assert (changed["updated"], changed["revision"]) == (True, 2)
    assert (replayed["updated"], replayed["revision"]) == (False, 2)


async def refused(runtime, params):
    async with serving(runtime, sources=()):
        return task_create(**params, context=call_context(runtime, "task_create"))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"title": "x", "due": "tomorrow"}, "due: 'tomorrow' is not an ISO 8601"),
        ({"title": "x", "due": "2100-01-01T09:00"}, "has no time zone"),
        ({"title": "x", "agent": "nobody"}, "agent: agent 'nobody' is unknown"),
        ({"title": "  "}, "title: empty"),
    ],
)
def test_bad_parameters_are_refused_naming_them(tmp_path, params, message):
    runtime = runtime_with(tmp_path, Cast())
    with pytest.raises(TaskToolError, match=re.escape(message)):
        asyncio.run(refused(runtime, params))
