"""A real `toolang run` killed while a thread's older turns are being summarised: after
a restart the thread goes on — the turn compacts again and completes — and no tool call
is made twice."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from kill_helpers import TOOL_MODULE, kit_environment, start_kit_runtime

from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, SubmitRules, TurnStatus
from toolang_core.testing.cli import run_toolang
from toolang_core.testing.dists import make_distribution
from toolang_core.testing.processes import KILL_AND_RESUME_CONFIG, kill_when
from toolang_core.turn.compaction import SUMMARY_KIND

pytestmark = pytest.mark.slow  # real processes killed mid-turn and restarted

SUMMARISER_MODULE = '''
import asyncio
import os
from pathlib import Path

from toolang_core import hookimpl
from toolang_core.models import ModelResponse


class Summariser:
    """Keeps the FACT lines of what it is sent; with $SUMMARISER_HANG set it says it
    was asked (the file) and never answers: the runtime is killed meanwhile."""

    async def complete(self, request):
        hang = os.environ.get("SUMMARISER_HANG")
        if hang:
            Path(hang).write_text("asked")
            await asyncio.sleep(600)
        text = request.messages[-1].content
        facts = [line.removeprefix("user: ") for line in text.splitlines() if "FACT" in line]
        return ModelResponse(text="\\n".join(dict.fromkeys(facts)) or "nothing to keep")


class Provider:
    def model(self, model_id):
        return Summariser()


@hookimpl
def toolang_register_models(register):
    register("summariser", lambda context: Provider(), description="a test summariser")
'''

CONFIG = KILL_AND_RESUME_CONFIG + (
    '\n[agents]\ncontext_tokens = 400\nsummary_model = "summariser"\n'
)
TURNS = 10


def install(site: Path) -> None:
    make_distribution(
        site,
        "toolang-test-compaction-kit",
        entry_points={
            "toolang": {
                "scripted": "toolang_core.testing.script_file_plugin",
                "counter-tool": "counter_tool",
                "summariser": "summariser_model",
            }
        },
        modules={"counter_tool": TOOL_MODULE, "summariser_model": SUMMARISER_MODULE},
    )


def start(home: Path, site: Path, *extra: str, hang: Path | None) -> subprocess.Popen[str]:
    kit = kit_environment(home, site, TOOLANG_LOAD_PLUGINS="scripted,counter-tool,summariser")
    env = {k: v for k, v in kit.items() if not k.startswith("SUMMARISER_")}
    if hang is not None:
        env["SUMMARISER_HANG"] = str(hang)
    return start_kit_runtime(home, env, *extra, stdout=subprocess.DEVNULL)


def said(number: int) -> str:
    if number == 1:
        return "turn 1: FACT the harbour is called Fenwick"
    return f"turn {number}: " + " ".join(f"words{number}-{k}" for k in range(25))


def test_a_runtime_killed_while_compacting_compacts_again_and_repeats_no_tool_call(tmp_path):
    site = tmp_path / "site"
    install(site)
    home = tmp_path / "home"
    home.mkdir()
    (home / "toolang.toml").write_text(CONFIG)
    steps = [
        {"tool_calls": [{"id": "c1", "name": "count_visit", "params": {"label": "visit"}}]},
        {"text": "visited"},
    ]
    (home / "script.json").write_text(json.dumps(steps))
    store = SQLiteStore(home / ".toolang" / "toolang.db")
    ids = [
        store.submit(
            NewTurnRequest(source="chat", thread_id="cli:harbour", input=said(n)),
            SubmitRules("chat", 10),
            now=time.time(),
        ).id
        for n in range(1, TURNS + 1)
    ]

    asked = home / "summariser-asked"
    first = start(home, site, hang=asked)
    kill_when(first, asked.exists, 60, "the summariser being asked")
    running = [t for t in (store.get(i) for i in ids) if t.status is TurnStatus.RUNNING]
    assert len(running) == 1
    cut_off = running[0]
    done_before = ids.index(cut_off.id)
    assert done_before >= 2  # some turns fit before the thread outgrew the budget
    visits = (home / "counter.txt").read_text().splitlines()
    assert len(visits) == done_before  # the cut-off turn had not reached its tool call
    assert store.get_record(SUMMARY_KIND, "cli:harbour") is None

    second = start(home, site, "--until-idle", hang=None)
    _out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err

    turns = [store.get(i) for i in ids]
    assert [t.status for t in turns] == [TurnStatus.COMPLETED] * TURNS
    assert store.get(cut_off.id).attempt == 2
    # one visit per turn: none repeated by the resumed turn
    assert len((home / "counter.txt").read_text().splitlines()) == TURNS
    compactions = [s for s in store.steps(cut_off.id) if s.kind == "compaction"]
    assert compactions and all(s.attempt == 2 for s in compactions)
    summary = store.get_record(SUMMARY_KIND, "cli:harbour")
    assert summary is not None and "Fenwick" in summary.data["text"]
    store.close()

    trace = run_toolang("turns", "trace", cut_off.id, cwd=home, env={"TOOLANG_LOAD_PLUGINS": ""})
    assert trace.returncode == 0, trace.stderr
    assert "completed, attempt 2" in trace.stdout  # attempt 1 stored no step
    assert "compaction" in trace.stdout and "Fenwick" in trace.stdout
