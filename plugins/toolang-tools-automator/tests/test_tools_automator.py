"""toolang-tools-automator, alone: chores, background tasks and workflows driven by the
scripted model through the whole tool chain, on a real store. (The chore firing
through toolang-source-chore under a fake clock, the roles' ownership and the SIGKILL
run are integration tests: tests/integration/test_automator_e2e.py.)"""

from __future__ import annotations

import asyncio
import json

import pytest
from automator_helpers import Conductor

import toolang_tools_automator as plugin
from toolang_core import TurnFilter
from toolang_core.testing.models import ScriptedModel, text, tool_call, tool_calls
from toolang_core.testing.runtimes import run_turn, tool_results

CONFIG = '[models]\ndefault = "scripted"\n[delegation]\nmax_spawns_per_turn = 8\n'

PIPELINE = """\
description: gather two ways, then merge
steps:
  - id: left
    agent: assistant
    instruction: Gather the left half.
  - id: right
    agent: assistant
    instruction: Gather the right half.
  - id: merge
    agent: assistant
    instruction: Merge both halves.
    depends_on: [left, right]
"""


@pytest.fixture
def automator(toolang_runtime):
    """``make(conductor)``: a runtime whose model is ``conductor``."""

    def make(conductor):
        model = ScriptedModel(conductor)
        return toolang_runtime(
            CONFIG, plugins={"tools-automator": plugin, "scripted": model.plugin()}
        )

    return make


def outputs(runtime, turn_id):
    return [r["output"] if r["ok"] else r for r in tool_results(runtime, turn_id)]


def test_chores_are_added_listed_paused_resumed_and_removed_as_store_records(automator):
    add = {
        "name": "standup",
        "schedule_type": "cron",
        "schedule": "0 9 * * 1-5",
        "prompt": "Summarise yesterday.",
    }
    conductor = Conductor(
        {
            "add": [tool_call("cron_add", add), tool_call("cron_list", {}), text("ok")],
        }
    )
    runtime = automator(conductor)
    added, listed = outputs(runtime, run_turn(runtime, "add"))
    chore_id = added["id"]
    assert added["added"] is True and added["next_at"] > 0
    assert [(c["id"], c["name"], c["paused"]) for c in listed] == [(chore_id, "standup", False)]
    store = runtime.open_store()
    (record,) = store.list_records("chore")
    assert record.data["owner"] == "alice" and record.data["schedule"] == "0 9 * * 1-5"

    conductor.scripts["pause"] = [
        tool_call("cron_pause", {"id": chore_id}),
        tool_call("cron_resume", {"id": chore_id}),
        tool_call("cron_pause", {"id": chore_id}),
        text("ok"),
    ]
    paused, resumed, _ = outputs(runtime, run_turn(runtime, "pause"))
    assert (paused["paused"], paused["next_at"]) == (True, None)
    assert resumed["paused"] is False and resumed["next_at"] > 0
    assert store.get_record("chore", chore_id).data["paused"] is True

    conductor.scripts["bob"] = [
        tool_call("cron_list", {}),
        tool_call("cron_remove", {"id": chore_id}),
        text("ok"),
    ]
    theirs, refused = outputs(runtime, run_turn(runtime, "bob", owner="bob"))
    assert theirs == [] and "no chore" in refused["error"]
    conductor.scripts["remove"] = [tool_call("cron_remove", {"id": chore_id}), text("ok")]
    (removed,) = outputs(runtime, run_turn(runtime, "remove"))
    assert removed == {"id": chore_id, "removed": True}
    assert store.list_records("chore") == []


def test_background_tasks_run_as_task_runs_of_their_owner(automator):
    conductor = Conductor(
        {"submit": [tool_call("bg_submit", {"prompt": "count the stars"}), text("started")]}
    )
    runtime = automator(conductor)
    (submitted,) = outputs(runtime, run_turn(runtime, "submit"))
    task_id = submitted["task_id"]
    assert submitted["status"] == "queued"
    conductor.scripts["check"] = [
        tool_call("bg_status", {"task_id": task_id}),
        tool_call("bg_result", {"task_id": task_id}),
        tool_call("bg_cancel", {"task_id": task_id}),
        text("ok"),
    ]
    status, result, cancel = outputs(runtime, run_turn(runtime, "check"))
    assert status["status"] == "completed"
    assert result["result"] == "done: count the stars" and result["finished"] is True
    assert cancel["canceled"] is False  # it had finished: nothing to cancel
    conductor.scripts["peek"] = [
        tool_call("bg_result", {"task_id": task_id}),
        tool_call("bg_cancel", {"task_id": task_id}),
        text("ok"),
    ]
    peek, stop = outputs(runtime, run_turn(runtime, "peek", owner="bob"))
    assert "no background task" in peek["error"] and "no background task" in stop["error"]


def test_a_running_background_task_is_canceled(automator):
    started = asyncio.Event()

    class Slow(Conductor):
        async def __call__(self, request):
            said = [m for m in request.messages if m.role == "user"][-1].content
            if said == "a long errand":
                started.set()
                await asyncio.sleep(30)  # canceled long before
            return await super().__call__(request)

    async def cancel_once_running(request):
        await asyncio.wait_for(started.wait(), timeout=10)
        task_id = json.loads(request.messages[-1].content)["output"]["task_id"]
        return tool_call("bg_cancel", {"task_id": task_id})

    conductor = Slow(
        {
            "go": [
                tool_call("bg_submit", {"prompt": "a long errand"}),
                cancel_once_running,
                text("stopped"),
            ]
        }
    )
    runtime = automator(conductor)
    submitted, canceled = outputs(runtime, run_turn(runtime, "go"))
    assert canceled["canceled"] is True and canceled["status"] in ("canceling", "canceled")
    conductor.scripts["check"] = [
        tool_call("bg_result", {"task_id": submitted["task_id"]}),
        text("ok"),
    ]
    (result,) = outputs(runtime, run_turn(runtime, "check"))
    assert (result["status"], result["finished"]) == ("canceled", True)


def test_a_workflow_runs_its_parallel_pair_then_the_dependent_step_with_their_results(
    automator,
):
    both_started = asyncio.Event()
    started: list[str] = []

    async def step(step_id, task):
        if step_id in ("left", "right"):
            started.append(step_id)
            if len(started) == 2:
                both_started.set()
            # Each of the pair waits for the other: only a parallel run gets past this.
            await asyncio.wait_for(both_started.wait(), timeout=10)
        return text(f"{step_id} found {len(task)} chars")

    conductor = Conductor(
        {
            "run": [
                tool_call("workflow_save", {"name": "halves", "yaml_content": PIPELINE}),
                tool_call("workflow_run", {"name": "halves", "input": "the sky"}),
                text("started"),
            ]
        },
        steps=step,
    )
    runtime = automator(conductor)
    saved, started_run = outputs(runtime, run_turn(runtime, "run"))
    assert saved == {"name": "halves", "steps": ["left", "right", "merge"], "saved": True}
    run_id = started_run["run_id"]
    assert [s["status"] for s in started_run["steps"]] == ["queued", "queued", "waiting"]
    conductor.scripts["status"] = [tool_call("workflow_status", {"run_id": run_id}), text("ok")]
    (status,) = outputs(runtime, run_turn(runtime, "status"))
    assert status["status"] == "completed"
    assert [s["status"] for s in status["steps"]] == ["completed"] * 3
    merge_task = next(t for t in conductor.tasks if t.startswith("You are running step 'merge'"))
    assert "Result of step 'left':\nleft found" in merge_task
    assert "Result of step 'right':\nright found" in merge_task
    assert "Workflow input:\nthe sky" in merge_task
    assert sum(t.startswith("You are running step") for t in conductor.tasks) == 3


def test_a_failed_step_skips_its_dependents_and_fails_the_run(automator):
    from toolang_core.testing.models import error

    conductor = Conductor(
        {
            "run": [
                tool_call("workflow_save", {"name": "halves", "yaml_content": PIPELINE}),
                tool_call("workflow_run", {"name": "halves"}),
                text("started"),
            ]
        },
        steps=lambda step_id, task: error("model down") if step_id == "left" else text("ok"),
    )
    runtime = automator(conductor)
    _, started = outputs(runtime, run_turn(runtime, "run"))
    conductor.scripts["status"] = [
        tool_call("workflow_status", {"run_id": started["run_id"]}),
        text("ok"),
    ]
    (status,) = outputs(runtime, run_turn(runtime, "status"))
    assert status["status"] == "failed"
    assert [s["status"] for s in status["steps"]] == ["failed", "completed", "skipped"]


def test_canceling_a_workflow_cancels_its_running_steps_and_starts_no_more(automator):
    left_started = asyncio.Event()

    async def step(step_id, task):
        if step_id == "left":
            left_started.set()
            await asyncio.sleep(30)  # canceled long before
        return text(f"{step_id} done")

    async def cancel_once_left_runs(request):
        await asyncio.wait_for(left_started.wait(), timeout=10)
        run_id = json.loads(request.messages[-1].content)["output"]["run_id"]
        return tool_call("workflow_cancel", {"run_id": run_id})

    conductor = Conductor(
        {
            "run": [
                tool_call("workflow_save", {"name": "halves", "yaml_content": PIPELINE}),
                tool_call("workflow_run", {"name": "halves"}),
                cancel_once_left_runs,
                text("canceled"),
            ]
        },
        steps=step,
    )
    runtime = automator(conductor)
    results = outputs(runtime, run_turn(runtime, "run"))
    run_id = results[1]["run_id"]
    assert results[2]["status"] == "canceled"
    conductor.scripts["status"] = [tool_call("workflow_status", {"run_id": run_id}), text("ok")]
    (status,) = outputs(runtime, run_turn(runtime, "status"))
    states = {s["id"]: s["status"] for s in status["steps"]}
    assert status["status"] == "canceled"
    assert states["left"] == "canceled" and states["merge"] == "canceled"
    assert not any(t.startswith("You are running step 'merge'") for t in conductor.tasks)


BAD_YAML = {
    "cycle": (
        "steps:\n  - id: a\n    agent: assistant\n    instruction: x\n    depends_on: [b]\n"
        "  - id: b\n    agent: assistant\n    instruction: y\n    depends_on: [a]\n",
        "line 2: depends_on: the steps form a cycle (a -> b -> a)",
    ),
    "ghost agent": (
        "steps:\n  - id: a\n    agent: ghost\n    instruction: x\n",
        "line 3: steps[0].agent: agent 'ghost' is unknown",
    ),
    "unknown dependency": (
        "steps:\n  - id: a\n    agent: assistant\n    instruction: x\n    depends_on: [zz]\n",
        "line 2: steps[0].depends_on: no step 'zz'",
    ),
    "broken yaml": ("steps: [\n  - id: a\n", "line 2: not valid YAML"),
    "no steps": ("description: nothing\n", "steps: missing"),
    "bad key": (
        "steps:\n  - id: a\n    agent: assistant\n    instruction: x\n    colour: red\n",
        "line 5: steps[0]: unknown key 'colour'",
    ),
    "duplicate id": (
        "steps:\n  - id: a\n    agent: assistant\n    instruction: x\n"
        "  - id: a\n    agent: assistant\n    instruction: y\n",
        "line 5: steps[1].id: 'a' is used twice (first at line 2)",
    ),
    "tools outside scope": (
        "steps:\n  - id: a\n    agent: assistant\n    instruction: x\n"
        "    allowed_tools: [no_such_tool]\n",
        "line 3: steps[0].agent:",
    ),
}

BAD_CALLS = [
    (
        "cron_add",
        {"name": "x", "schedule_type": "cron", "schedule": "61 * * * *", "prompt": "p"},
        "schedule",
    ),
    (
        "cron_add",
        {"name": "x", "schedule_type": "every", "schedule": "banana", "prompt": "p"},
        "schedule",
    ),
    (
        "cron_add",
        {"name": "x", "schedule_type": "rrule", "schedule": "*/5 * * * *", "prompt": "p"},
        "schedule",
    ),
    (
        "cron_add",
        {"name": "x", "schedule_type": "hourly", "schedule": "x", "prompt": "p"},
        "schedule_type",
    ),
    (
        "cron_add",
        {"name": "Bad Name", "schedule_type": "every", "schedule": "5 minutes", "prompt": "p"},
        "name",
    ),
    (
        "cron_add",
        {"name": "x", "schedule_type": "every", "schedule": "5 minutes", "prompt": "  "},
        "prompt",
    ),
    (
        "cron_add",
        {
            "name": "x",
            "schedule_type": "every",
            "schedule": "5 minutes",
            "prompt": "p",
            "agent": "ghost",
        },
        "agent",
    ),
    (
        "cron_add",
        {
            "name": "x",
            "schedule_type": "every",
            "schedule": "5 minutes",
            "prompt": "p",
            "thread_id": "cli:alice",
        },
        "thread_id",
    ),
    ("cron_pause", {"id": "cron.0123456789abcdef0123"}, "id"),
    ("cron_remove", {"id": "../etc"}, "id"),
    ("bg_submit", {"prompt": ""}, "prompt"),
    ("bg_submit", {"prompt": "x", "agent": "ghost"}, "ghost"),
    ("bg_status", {"task_id": "no-such-task"}, "task_id"),
    ("bg_cancel", {"task_id": "BAD ID"}, "task_id"),
    ("workflow_save", {"name": "w", "yaml_content": "x" * 64_001}, "yaml_content"),
    ("workflow_run", {"name": "never-saved"}, "name"),
    ("workflow_status", {"run_id": "wf-0123456789abcdef0123"}, "run_id"),
    ("workflow_cancel", {"run_id": "nope"}, "run_id"),
]


def _snapshot(runtime):
    store = runtime.open_store()
    try:
        records = [
            (r.kind, r.key, r.revision, r.data)
            for kind in ("chore", "workflow", "workflow.run")
            for r in store.list_records(kind)
        ]
        task_runs = [
            (t.id, t.status) for t in store.list_turns(TurnFilter(source="task", limit=1000))
        ]
        return records, task_runs
    finally:
        store.close()


def test_bad_inputs_are_tool_errors_naming_the_field_and_change_nothing(automator):
    calls = [(name, params) for name, params, _ in BAD_CALLS]
    calls += [("workflow_save", {"name": "bad", "yaml_content": y}) for y, _ in BAD_YAML.values()]
    calls[7] = (
        "cron_add",
        {
            "name": "y",
            "schedule_type": "every",
            "schedule": "5 minutes",
            "prompt": "p",
            "thread_id": "cli:bob",  # bob's thread: not alice's to use
        },
    )
    conductor = Conductor(
        {
            "first": [
                tool_call(
                    "cron_add",
                    {"name": "x", "schedule_type": "every", "schedule": "5 minutes", "prompt": "p"},
                ),
                text("ok"),
            ],
            "bob": [
                tool_call(
                    "cron_add",
                    {"name": "b", "schedule_type": "every", "schedule": "9 minutes", "prompt": "p"},
                ),
                tool_call("bg_submit", {"prompt": "bob's errand"}),
                tool_call("workflow_save", {"name": "halves", "yaml_content": PIPELINE}),
                tool_call("workflow_run", {"name": "halves"}),
                text("ok"),
            ],
        }
    )
    runtime = automator(conductor)
    run_turn(runtime, "first")
    bobs = outputs(runtime, run_turn(runtime, "bob", owner="bob"))
    chore, task, run = bobs[0]["id"], bobs[1]["task_id"], bobs[3]["run_id"]
    others = [  # bob's chore, task and workflow run: "not found" for alice
        ("cron_pause", {"id": chore}, "id"),
        ("cron_remove", {"id": chore}, "id"),
        ("bg_result", {"task_id": task}, "task_id"),
        ("bg_cancel", {"task_id": task}, "task_id"),
        ("workflow_status", {"run_id": run}, "run_id"),
        ("workflow_cancel", {"run_id": run}, "run_id"),
        ("workflow_run", {"name": "halves"}, "name"),  # bob's workflow, not alice's
    ]
    calls += [(name, params) for name, params, _ in others]
    conductor.scripts["bad"] = [tool_calls(*calls), text("ok")]  # one model step: c0, c1, …
    before = _snapshot(runtime)
    turn_id = run_turn(runtime, "bad")
    steps = [s for s in runtime.open_store().steps(turn_id) if "result" in s.data]
    results = {s.data["call"]["id"]: s.data["result"] for s in steps}
    expected = [field for _, _, field in BAD_CALLS] + [m for _, m in BAD_YAML.values()]
    expected += [field for _, _, field in others]
    assert len(results) == len(expected) >= 10
    for index, (field, call) in enumerate(zip(expected, calls, strict=True)):
        result = results[f"c{index}"]
        assert result["ok"] is False, (call, result)
        assert field in result["error"], (call, result["error"])
    assert _snapshot(runtime) == before
