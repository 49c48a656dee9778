"""A runtime SIGKILLed while a turn waits in a sync ``start_task_run`` for its child.

The next runtime resumes both. The child finishes. The parent's ``start_task_run``
call is in doubt (its intent was stored, its result never was); it used to be answered
"may already have run — NOT run again", so the parent's answer lacked the child's
result although the child was known and done. The call is run again under its
idempotency key instead: it finds the child it spawned (nothing is spawned twice),
waits for it, and the parent answers with the child's result.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolang_core import NewTurnRequest, TurnFilter, TurnStatus
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import SubmitRules
from toolang_core.testing.dists import make_distribution
from toolang_core.testing.processes import kill_when, start_toolang_run

pytestmark = pytest.mark.slow  # real processes killed mid-run and restarted

KIT = '''
import asyncio, json, os
from pathlib import Path
from toolang_core import AgentDefinition, AgentLoad, ToolCall, hookimpl
from toolang_core.models.types import ModelResponse


class Boss:
    """The parent asks for a sync task run and answers with what it got back; the
    child waits while the gate file exists, then reports its visit."""

    async def complete(self, request):
        last = request.messages[-1]
        if last.role == "tool":
            return ModelResponse(text="parent got: " + last.content, model="kit")
        text = next(m.content for m in reversed(request.messages) if m.role == "user")
        if text == "delegate":
            params = {"task": "visit the site", "agent_name": "visitor", "mode": "sync"}
            call = ToolCall("c1", "start_task_run", params)
            return ModelResponse(tool_calls=(call,), model="kit")
        while Path(os.environ["KIT_GATE"]).exists():
            await asyncio.sleep(0.02)
        with open(os.environ["KIT_VISITS"], "a", encoding="utf-8") as f:
            f.write("visit\\n")
        return ModelResponse(text="the visit is done", model="kit")


class Provider:
    def model(self, model_id):
        return Boss()


@hookimpl
def toolang_register_models(register):
    register("kit", lambda context: Provider(), description="the parent and its child (tests)")


class Agents:
    label = "user"
    name = "kit-agents"

    def load(self, context):
        return AgentLoad(definitions=(
            AgentDefinition(name="boss", tools=("*",)),
            AgentDefinition(name="visitor"),
        ))


@hookimpl
def toolang_agent_sources():
    return Agents()
'''

CONFIG = """
[runtime]
executor = "agent"
lease_seconds = 5.0
poll_seconds = 0.05
shutdown_grace_seconds = 0.2

[models]
default = "kit"

[agents]
default = "boss"
"""


def store_of(home: Path) -> SQLiteStore:
    return SQLiteStore(home / ".toolang" / "toolang.db")


def test_a_sync_start_task_run_in_doubt_after_a_kill_answers_with_the_childs_result(tmp_path):
    site = tmp_path / "site"
    make_distribution(
        site,
        "toolang-test-sync-spawn",
        entry_points={"toolang": {"kit": "sync_kit"}},
        modules={"sync_kit": KIT},
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "toolang.toml").write_text(CONFIG, encoding="utf-8")
    gate, visits = home / "gate", home / "visits.txt"
    gate.touch()  # the child waits: the parent is left waiting in start_task_run
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(
        TOOLANG_LOAD_PLUGINS="kit",
        KIT_GATE=str(gate),
        KIT_VISITS=str(visits),
        PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
    )
    store = store_of(home)
    parent = store.submit(
        NewTurnRequest(source="chat", thread_id="cli:boss", input="delegate"),
        SubmitRules("chat", 10),
        now=time.time(),
    ).id

    def children():
        return store.list_turns(TurnFilter(parent=parent, source="task"))

    def waiting() -> bool:
        spawn = [s for s in store.steps(parent) if s.kind == "tool_call"]
        running = [c for c in children() if c.status is TurnStatus.RUNNING]
        return bool(spawn) and spawn[0].status == "intent" and bool(running)

    first = start_toolang_run(home, env, home / "first.log", "--no-sources")
    kill_when(first, waiting, 60, "the parent to wait in start_task_run for its running child")
    gate.unlink()
    second = subprocess.run(
        [sys.executable, "-m", "toolang_core", "run", "--no-sources", "--until-idle"],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert second.returncode == 0, second.stderr
    done = store.get(parent)
    (child,) = children()  # spawned once: the resumed call found it
    (call,) = [s for s in store.steps(parent) if s.kind == "tool_call"]
    store.close()
    assert (child.status, child.output) == (TurnStatus.COMPLETED, "the visit is done")
    assert done.status is TurnStatus.COMPLETED, done.error
    assert done.attempt == 2
    assert "the visit is done" in (done.output or "")  # the user's answer has the result
    assert call.data["in_doubt"]["decision"] == "rerun"
    assert call.data["result"]["ok"] is True
    assert visits.read_text().splitlines() == ["visit"]  # the child's work happened once
