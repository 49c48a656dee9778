"""A workflow survives a SIGKILL of its runtime mid-pipeline: the restarted runtime
resumes it, and each step runs once (one task run per step; each step's side effect —
a counted tool call — happens once, the interrupted steps' calls replayed from the
store). Real `toolang run` subprocesses; the automator is found through its entry point.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from kill_helpers import TOOL_MODULE

from toolang_core import NewTurnRequest, TurnFilter, TurnStatus
from toolang_core.config import load_config
from toolang_core.runtime import Runtime
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.testing.dists import make_distribution
from toolang_core.testing.processes import wait_for

CONFIG = """
[runtime]
executor = "agent"
lease_seconds = 5.0
poll_seconds = 0.05
shutdown_grace_seconds = 0.2

[models]
default = "pipeline"

[scheduler.groups.task]
max_running = 4

[plugins.tools-automator]
reconcile_seconds = 0.2
"""

WORKFLOW = """\
steps:
  - id: left
    agent: assistant
    instruction: Gather the left half.
  - id: right
    agent: assistant
    instruction: Gather the right half.
  - id: merge
    agent: assistant
    instruction: Merge the halves.
    depends_on: [left, right]
  - id: publish
    agent: assistant
    instruction: Publish the merge.
    depends_on: [merge]
"""

# Stateless, like the script-file model: the answer depends only on the conversation,
# so a turn resumed in a new process gets the same answers. A step visits the counter
# once, then answers after $STEP_DELAY_FILE's seconds.
MODEL_MODULE = """
import asyncio, json, os, re
from pathlib import Path
from toolang_core import ToolCall, hookimpl
from toolang_core.models import ModelResponse

STEP = re.compile(r"^You are running step '(\\w+)'")


class Pipeline:
    async def complete(self, request):
        users = [m for m in request.messages if m.role == "user"]
        said = users[-1].content if users else ""
        index = 0
        for message in reversed(request.messages):
            if message.role == "user":
                break
            if message.role == "assistant":
                index += 1
        step = STEP.match(said)
        if step is None:  # the chat turn that starts the workflow
            yaml_text = Path(os.environ["WORKFLOW_FILE"]).read_text()
            calls = [
                ("workflow_save", {"name": "halves", "yaml_content": yaml_text}),
                ("workflow_run", {"name": "halves"}),
            ]
            if index < len(calls):
                return ModelResponse(tool_calls=(ToolCall(f"w{index}", *calls[index]),))
            return ModelResponse(text="started")
        if index == 0:
            label = step.group(1)
            return ModelResponse(
                tool_calls=(ToolCall("c1", "count_visit", {"label": label}),)
            )
        await asyncio.sleep(float(Path(os.environ["STEP_DELAY_FILE"]).read_text()))
        return ModelResponse(text=f"{step.group(1)} is done")


class Provider:
    def model(self, model_id):
        return Pipeline()


@hookimpl
def toolang_register_models(register):
    register("pipeline", lambda context: Provider(), description="workflow steps (tests)")
"""


def start_runtime(home: Path, env: dict[str, str], *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "toolang_core", "run", "--no-sources", *extra],
        cwd=home,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_workflow_survives_a_sigkill_mid_run_and_each_step_runs_once(tmp_path):
    site = tmp_path / "site"
    make_distribution(
        site,
        "toolang-test-pipeline",
        entry_points={"toolang": {"pipeline": "pipeline_model", "counter-tool": "counter_tool"}},
        modules={"pipeline_model": MODEL_MODULE, "counter_tool": TOOL_MODULE},
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "toolang.toml").write_text(CONFIG)
    (home / "workflow.yaml").write_text(WORKFLOW)
    delay = home / "delay.txt"
    delay.write_text("120")  # the first runtime never finishes a step
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(
        TOOLANG_LOAD_PLUGINS="pipeline,counter-tool,tools-automator",
        WORKFLOW_FILE=str(home / "workflow.yaml"),
        STEP_DELAY_FILE=str(delay),
        COUNTER_FILE=str(home / "counter.txt"),
        PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
    )
    only = {"TOOLANG_LOAD_PLUGINS": "tools-automator"}  # its settings section is valid
    runtime = Runtime.from_config(load_config(home / "toolang.toml", env=only), env=only)
    inbox = runtime.open_inbox()  # durable ingress: the serving runtime picks it up
    chat = inbox.submit(
        NewTurnRequest(source="chat", thread_id="cli:ada", input="run halves", owner="ada")
    ).id
    inbox.store.close()
    store = SQLiteStore(home / ".toolang" / "toolang.db")

    def visits() -> list[str]:
        counter = home / "counter.txt"
        return sorted(counter.read_text().splitlines()) if counter.exists() else []

    first = start_runtime(home, env)
    try:
        wait_for(lambda: visits() == ["left", "right"], 60, "both parallel steps to run")
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    (run,) = store.list_records("workflow.run")
    assert run.data["status"] == "running"
    assert store.get(chat).status is TurnStatus.COMPLETED

    delay.write_text("0")
    second = start_runtime(home, env)
    try:
        wait_for(
            lambda: (store.get_record("workflow.run", run.key) or run).data["status"] != "running",
            120,
            "the workflow to finish after the restart",
        )
    finally:
        second.send_signal(signal.SIGTERM)
        _out, err = second.communicate(timeout=60)
    assert store.get_record("workflow.run", run.key).data["status"] == "completed", err

    assert visits() == ["left", "merge", "publish", "right"]  # each step's effect once
    steps = [
        t
        for t in store.list_turns(TurnFilter(source="task", limit=100))
        if t.id.startswith(run.key)
    ]
    assert sorted(t.id.removeprefix(f"{run.key}-") for t in steps) == [
        "left",
        "merge",
        "publish",
        "right",
    ]
    assert all(t.status is TurnStatus.COMPLETED for t in steps)
    attempts = {t.id.removeprefix(f"{run.key}-"): t.attempt for t in steps}
    assert attempts["left"] == attempts["right"] == 2  # resumed, not started again
    assert attempts["merge"] == attempts["publish"] == 1
    for turn in steps:
        assert [s.kind for s in store.steps(turn.id)].count("tool_call") == 1
    merge = next(t for t in steps if t.id.endswith("-merge"))
    assert "Result of step 'left':\nleft is done" in merge.input
    store.close()
