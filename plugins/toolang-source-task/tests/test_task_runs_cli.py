"""``toolang tasks runs | get | wait | cancel | transcript | prune`` over real stores.

Runs are spawned through the public controller (as an agent's tool would), then read
and changed by the real CLI in a subprocess.
"""

from __future__ import annotations

import asyncio
import json

import pytest

import toolang_source_task as plugin
from toolang_core import SpawnRequest, TaskRunController, TaskRunStatus, TurnFilter
from toolang_core.testing.models import ScriptedModel, text, tokens, tool_call

ECHO = '[runtime]\nexecutor = "echo"\nsources = []\n'
ENV = {"TOOLANG_LOAD_PLUGINS": "source-task"}


@pytest.fixture
def runtime(toolang_runtime):
    return toolang_runtime(ECHO, plugins={"source-task": plugin})


def spawn(runtime, task: str = "echo me", **kw) -> str:
    store = runtime.open_store()
    try:
        request = SpawnRequest(
            owner=kw.pop("owner", "ada"), parent_thread_id="chat:1", task=task, **kw
        )
        return asyncio.run(TaskRunController(store, runtime).spawn(request)).id
    finally:
        store.close()


def test_runs_lists_the_runs_newest_first(runtime, toolang_cli):
    first = spawn(runtime, "first")
    second = spawn(runtime, "second", owner="bob")
    listed = json.loads(toolang_cli("tasks", "runs", "--json", env=ENV).stdout)
    assert [(r["id"], r["status"], r["owner"]) for r in listed] == [
        (second, "queued", "bob"),
        (first, "queued", "ada"),
    ]
    mine = json.loads(toolang_cli("tasks", "runs", "--owner", "ada", "--json", env=ENV).stdout)
    assert [r["id"] for r in mine] == [first]
    table = toolang_cli("tasks", "runs", env=ENV).stdout.splitlines()
    assert table[0].split()[:3] == ["id", "status", "agent"]
    assert {line.split()[0] for line in table[1:]} == {first, second}


def test_get_shows_a_run_and_another_owner_gets_not_found(runtime, toolang_cli):
    run_id = spawn(runtime, "summarise", agent_name="writer", metadata={"ticket": "T-1"})
    shown = toolang_cli("tasks", "get", run_id, env=ENV)
    assert shown.returncode == 0, shown.stderr
    fields = dict(line.split(None, 1) for line in shown.stdout.splitlines())
    assert (fields["id"], fields["status"], fields["agent"], fields["thread"]) == (
        run_id,
        "queued",
        "writer",
        f"task:{run_id}",
    )
    assert (fields["task"], fields["meta.ticket"], fields["parent"]) == (
        "summarise",
        "T-1",
        "chat:1 (turn -)",
    )
    other = toolang_cli("tasks", "get", run_id, "--owner", "bob", env=ENV)
    assert (other.returncode, other.stderr.strip()) == (6, "error: taskrun: run not found")


def test_get_shows_the_runs_token_usage(toolang_runtime, toolang_cli):
    model = ScriptedModel(
        [
            tool_call("task_note", {"text": "x"}, usage=tokens(100, 10, cached=60)),
            text("all done", usage=tokens(120, 5)),
        ]
    )
    runtime = toolang_runtime(
        '[runtime]\nexecutor = "agent"\nsources = []\n[models]\ndefault = "scripted"\n',
        plugins={"source-task": plugin, "scripted": model.plugin()},
    )
    run_id = spawn(runtime, "do the thing")
    asyncio.run(runtime.serve(asyncio.Event(), sources=(), until_idle=True))
    shown = toolang_cli("tasks", "get", run_id, env=ENV)
    assert shown.returncode == 0, shown.stderr
    fields = dict(line.split(None, 1) for line in shown.stdout.splitlines() if line.strip())
    assert fields["usage"] == "235 tokens (220 input, 15 output, 60 cached) in 2 model calls"
    as_json = json.loads(toolang_cli("tasks", "get", run_id, "--json", env=ENV).stdout)
    assert as_json["usage"] == {
        "input_tokens": 220,
        "output_tokens": 15,
        "cached_tokens": 60,
        "total_tokens": 235,
        "model_calls": 2,
    }


def test_wait_runs_the_run_when_no_runtime_serves_the_store(runtime, toolang_cli):
    """With no `toolang run`, `tasks wait` runs the run itself (as `toolang invoke`
    does) and exits 0 once it completed."""
    run_id = spawn(runtime, "echo me")
    waited = toolang_cli("tasks", "wait", run_id, "--json", env=ENV)
    assert waited.returncode == 0, waited.stderr
    run = json.loads(waited.stdout)
    assert (run["status"], run["result"], run["child_thread_id"]) == (
        "completed",
        "echo me",
        f"task:{run_id}",
    )


def test_cancel_takes_a_run_id_or_a_task_ref(runtime, toolang_cli):
    run_id = spawn(runtime)
    canceled = toolang_cli("tasks", "cancel", run_id, env=ENV)
    assert canceled.stdout == f"{run_id}: canceled\n"
    again = toolang_cli("tasks", "cancel", run_id, env=ENV)
    assert again.stdout == f"{run_id}: canceled (nothing to cancel)\n"
    waited = toolang_cli("tasks", "wait", run_id, env=ENV)
    assert waited.returncode == 1  # it ended, but not completed
    assert toolang_cli("tasks", "add", "Ship it", "--ref", "ship", env=ENV).returncode == 0
    assert toolang_cli("tasks", "cancel", "ship", env=ENV).stdout.startswith("ship cancelled")


def test_transcript_shows_the_child_threads_events(toolang_runtime, toolang_cli):
    model = ScriptedModel([tool_call("task_note", {"text": "x"}), text("all done")])
    runtime = toolang_runtime(
        '[runtime]\nexecutor = "agent"\nsources = []\n[models]\ndefault = "scripted"\n',
        plugins={"source-task": plugin, "scripted": model.plugin()},
    )
    run_id = spawn(runtime, "do the thing")
    asyncio.run(runtime.serve(asyncio.Event(), sources=(), until_idle=True))
    shown = toolang_cli("tasks", "transcript", run_id, env=ENV)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == f"{run_id} on task:{run_id}: completed"
    assert [line.split()[3:5] for line in lines[1:]] == [
        ["user", "do"],
        ["assistant", "→"],
        ["tool", "task_note:"],
        ["assistant", "all"],
    ]
    events = json.loads(toolang_cli("tasks", "transcript", run_id, "--json", env=ENV).stdout)
    assert events["events"][-1]["content"] == "all done"


def test_prune_deletes_finished_runs_past_the_retention(runtime, toolang_cli):
    done = spawn(runtime, "finish me")
    waiting = spawn(runtime, "stay")
    store = runtime.open_store()
    asyncio.run(TaskRunController(store, runtime).cancel(done, owner=None))
    store.close()
    dry = toolang_cli("tasks", "prune", "--older-than", "0", "--dry-run", env=ENV)
    assert (dry.stdout, dry.stderr.strip()) == (
        f"{done}\n",
        "would delete 1 task run(s) finished more than 0 day(s) ago",
    )
    kept = toolang_cli("tasks", "prune", env=ENV)  # the default retention keeps it
    assert kept.stdout == ""
    pruned = toolang_cli("tasks", "prune", "--older-than", "0", env=ENV)
    assert pruned.stdout == f"{done}\n"
    store = runtime.open_store()
    assert store.list_turns(TurnFilter(thread_id=f"task:{done}")) == []
    assert TaskRunController(store, runtime).get(waiting, owner="ada").status is (
        TaskRunStatus.QUEUED
    )
    store.close()


def test_without_a_store_the_commands_say_so(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    result = toolang_cli("tasks", "runs", env=ENV)
    assert result.returncode == 2
    assert "no task runs yet" in result.stderr
