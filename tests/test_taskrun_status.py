"""`toolang status` shows the task runs that are not finished: spawned runs are visible
(Lango's `agent list` never showed live spawned runs)."""

from __future__ import annotations

import asyncio
import json

from toolang_core import NewTurnRequest, SpawnRequest, TaskRunController, TaskRunStatus
from toolang_core.config import load_config
from toolang_core.runtime import Runtime
from toolang_core.testing.cli import assert_no_traceback

CONFIG = '[runtime]\nexecutor = "echo"\n'


def spawn_two(tmp_path) -> tuple[str, str]:
    (tmp_path / "toolang.toml").write_text(CONFIG)
    runtime = Runtime.from_config(
        load_config(tmp_path / "toolang.toml", env={}), env={}, load_entrypoints=False
    )
    store = runtime.open_store()
    controller = TaskRunController(store, runtime)

    def spawn(task: str, agent: str | None) -> str:
        request = SpawnRequest(
            owner="ada", parent_thread_id="chat:boss", task=task, agent_name=agent
        )
        return asyncio.run(controller.spawn(request)).id

    running, canceled = spawn("research the tides", "researcher"), spawn("stop me", None)
    store.claim(run_id="r", limit=1, now=1e10, lease_seconds=30, caps={}, only=[running])
    asyncio.run(controller.cancel(canceled, owner="ada"))
    store.close()
    return running, canceled


def test_status_lists_the_task_runs_not_finished(tmp_path, cli_run):
    running, canceled = spawn_two(tmp_path)
    result = cli_run("status")
    assert_no_traceback(result)
    lines = result.stdout.splitlines()
    start = lines.index("task runs 1 not finished (toolang tasks runs)")
    assert lines[start + 1].split()[:5] == [running, "running", "researcher", "for", "chat:boss"]
    assert lines[start + 1].endswith("research the tides")
    assert canceled not in result.stdout
    report = json.loads(cli_run("status", "--json").stdout)
    assert [(r["id"], r["status"]) for r in report["task_runs"]] == [(running, "running")]


def test_toolang_cancel_of_a_parent_turn_cancels_and_finalizes_its_queued_runs(tmp_path, cli_run):
    """Cancelling a parent turn cascades to its task runs; those that had not started
    end canceled at once (the command finalizes them: no runtime needed)."""
    (tmp_path / "toolang.toml").write_text(CONFIG)
    runtime = Runtime.from_config(
        load_config(tmp_path / "toolang.toml", env={}), env={}, load_entrypoints=False
    )
    inbox = runtime.open_inbox()
    parent = inbox.submit(NewTurnRequest(source="chat", thread_id="chat:boss", input="x")).id
    controller = TaskRunController(inbox.store, runtime)
    request = SpawnRequest(
        owner="ada", parent_thread_id="chat:boss", parent_turn_id=parent, task="child"
    )
    child = asyncio.run(controller.spawn(request)).id
    result = cli_run("cancel", parent)
    assert result.returncode == 0, result.stderr
    assert f"{child}: canceled (descendant)" in result.stdout
    run = controller.get(child, owner="ada")
    assert (run.status, run.summary) == (TaskRunStatus.CANCELED, "canceled")
    inbox.store.close()
