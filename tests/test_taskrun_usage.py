"""A task run's token usage through a real runtime: a scripted model reports usage, and
the run's view (:meth:`TaskRunController.get`, ``TaskRun.to_json``) sums every turn on
its thread and every run it spawned (docs/spend-limits.md, docs/delegation.md) — for its
owner only."""

from __future__ import annotations

import asyncio

import pytest
from taskrun_helpers import make_runtime, with_delegation

from toolang_core import (
    NewTurnRequest,
    SpawnRequest,
    TaskRunController,
    TaskRunFilter,
    TaskRunNotFound,
    Usage,
    UsageFilter,
)
from toolang_core.runtime import Runtime
from toolang_core.testing.cast import Cast, last_result
from toolang_core.testing.delegation import run_turn
from toolang_core.testing.models import text, tokens, tool_call


def serve(runtime: Runtime) -> None:
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))


@pytest.fixture
def closing():
    """Controllers over stores of their own (closed after the test)."""
    opened: list[TaskRunController] = []

    def controller(runtime: Runtime) -> TaskRunController:
        opened.append(TaskRunController(runtime.open_store(), runtime))
        return opened[-1]

    yield controller
    for each in opened:
        each.store.close()


def test_a_task_runs_usage_sums_both_turns_on_its_thread(tmp_path, closing):
    cast = Cast(
        assistant=[text("elsewhere", usage=tokens(7, 1))],
        researcher=[text("tides follow the moon", usage=tokens(100, 10, cached=40))],
    )
    runtime = make_runtime(tmp_path, cast)
    run_turn(runtime, thread="chat:1", owner="ada")  # the owner's other usage: not the run's
    spawn = SpawnRequest(
        owner="ada", parent_thread_id="chat:1", task="tides?", agent_name="researcher"
    )
    runs = closing(runtime)
    run_id = asyncio.run(runs.spawn(spawn)).id
    serve(runtime)
    follow_up = NewTurnRequest(  # a second turn on the run's thread (its task group)
        source="task", thread_id=f"task:{run_id}", input="why?", owner="ada", agent="researcher"
    )
    inbox = runtime.open_inbox()
    inbox.submit(follow_up)
    inbox.store.close()
    serve(runtime)

    run = runs.get(run_id, owner="ada")
    assert run.usage == Usage(input=200, output=20, cached=80, model_calls=2)
    assert run.to_json()["usage"] == {
        "input_tokens": 200,
        "output_tokens": 20,
        "cached_tokens": 80,
        "total_tokens": 220,
        "model_calls": 2,
    }
    assert runs.usage(run_id, owner="ada") == run.usage
    assert runs.get(run_id, owner=None).usage == run.usage  # the operator
    waited = asyncio.run(runs.wait(run_id, owner="ada", timeout=0))
    assert waited.usage == run.usage


def nested_cast() -> Cast:
    """The chat turn starts a run (automator) that starts a run (researcher); each
    model call reports its usage."""
    return Cast(
        assistant=[
            tool_call(
                "start_task_run",
                {"task": "nest", "agent_name": "automator", "mode": "sync"},
                usage=tokens(1000, 100),
            ),
            text("done", usage=tokens(1000, 100)),
        ],
        automator=[
            tool_call(
                "start_task_run",
                {"task": "deeper", "agent_name": "researcher", "mode": "sync"},
                usage=tokens(10, 1),
            ),
            lambda r: text(f"inner: {last_result(r)['output']['status']}", usage=tokens(10, 1)),
        ],
        researcher=[
            tool_call("lookup_fact", {"topic": "tides"}, usage=tokens(100, 10, cached=50)),
            text("tides follow the moon", usage=tokens(100, 10, cached=50)),
        ],
    )


def test_a_child_runs_tokens_count_in_its_parents_usage_and_only_for_its_owner(tmp_path, closing):
    runtime = make_runtime(tmp_path, nested_cast(), delegation=with_delegation(nested_spawns=True))
    top = run_turn(runtime, thread="chat:t", owner="ada")
    runs = closing(runtime)
    outer, inner = sorted(runs.list(TaskRunFilter(owner="ada")), key=lambda r: r.spawn_depth)
    assert (outer.agent_name, inner.agent_name) == ("automator", "researcher")
    assert inner.parent_turn_id == outer.id
    assert outer.result == "inner: completed"

    child = Usage(input=200, output=20, cached=100, model_calls=2)
    assert runs.get(inner.id, owner="ada").usage == child
    assert runs.get(outer.id, owner="ada").usage == child + Usage(20, 2, 0, 2)
    # the chat turn that started it all is not a task run's: only the turn's own sum has it
    store = runs.store
    assert store.usage(UsageFilter(turn_id=top.id)) == Usage(2000, 200, 0, 2)
    assert store.usage(UsageFilter(task_run=outer.id, owner="ada")).model_calls == 4
    # another owner reads nothing of it, through the same sum or the run's view
    assert store.usage(UsageFilter(task_run=outer.id, owner="bob")) == Usage()
    for read in (runs.get, runs.usage):
        with pytest.raises(TaskRunNotFound):
            read(outer.id, owner="bob")


def test_a_run_that_has_not_started_has_zero_usage(tmp_path, closing):
    runtime = make_runtime(tmp_path, Cast())
    runs = closing(runtime)
    spawn = SpawnRequest(owner="ada", parent_thread_id="chat:1", task="later")
    run = asyncio.run(runs.spawn(spawn))
    assert run.usage == Usage()
    assert run.to_json()["usage"]["model_calls"] == 0
    assert "usage" not in runs.list(TaskRunFilter(owner="ada"))[0].to_json()


@pytest.mark.parametrize(
    ("usage", "line"),
    [
        (Usage(100, 20, 0, 1), "120 tokens (100 input, 20 output) in 1 model call"),
        (Usage(220, 15, 60, 2), "235 tokens (220 input, 15 output, 60 cached) in 2 model calls"),
        (Usage(), "0 tokens (0 input, 0 output) in 0 model calls"),
    ],
)
def test_usage_reads_as_a_sentence_with_the_right_number(usage: Usage, line: str) -> None:
    assert usage.describe() == line
