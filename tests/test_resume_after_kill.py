"""A real `toolang run` killed between a tool call and the final answer resumes after a
restart without running that tool again: the tool's side effect (a line appended to a
file) is counted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, SubmitRules, TurnStatus
from toolang_core.testing.dists import make_distribution

CONFIG = """
[runtime]
executor = "agent"
lease_seconds = 5.0
poll_seconds = 0.05
shutdown_grace_seconds = 0.2

[models]
default = "scripted"
"""

TOOL_MODULE = '''
import os
from toolang_core import Tool, hookimpl


def count_visit(label: str) -> str:
    """Append a line to $COUNTER_FILE: a side effect a test can count.

    :param label: what to write
    """
    with open(os.environ["COUNTER_FILE"], "a", encoding="utf-8") as f:
        f.write(label + "\\n")
    return f"visited {label}"


@hookimpl
def toolang_register_tools(register):
    register(Tool.from_function(count_visit))
'''


def write_script(path: Path, final_delay: float) -> None:
    steps = [
        {"tool_calls": [{"id": "c1", "name": "count_visit", "params": {"label": "side-effect"}}]},
        {"text": "the visit is done", "delay": final_delay},
    ]
    path.write_text(json.dumps(steps), encoding="utf-8")


def start(home: Path, site: Path, *extra: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(
        TOOLANG_LOAD_PLUGINS="scripted,counter-tool",
        TOOLANG_SCRIPT=str(home / "script.json"),
        COUNTER_FILE=str(home / "counter.txt"),
        PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
    )
    return subprocess.Popen(
        [sys.executable, "-m", "toolang_core", "run", "--no-sources", *extra],
        cwd=home,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def test_a_turn_killed_after_its_tool_call_resumes_without_running_the_tool_again(tmp_path):
    site = tmp_path / "site"
    make_distribution(
        site,
        "toolang-test-kit",
        entry_points={
            "toolang": {
                "scripted": "toolang_core.testing.script_file_plugin",
                "counter-tool": "counter_tool",
            }
        },
        modules={"counter_tool": TOOL_MODULE},
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "toolang.toml").write_text(CONFIG)
    write_script(home / "script.json", final_delay=120)  # the first run never answers
    store = SQLiteStore(home / ".toolang" / "toolang.db")
    turn_id = store.submit(
        NewTurnRequest(source="chat", thread_id="cli:kill", input="visit once"),
        SubmitRules("chat", 10),
        now=time.time(),
    ).id

    first = start(home, site)
    try:
        wait_for(
            lambda: any(s.kind == "tool_call" for s in store.steps(turn_id)),
            60,
            "the tool call to be recorded",
        )
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    assert (home / "counter.txt").read_text().splitlines() == ["side-effect"]
    assert store.get(turn_id).status is TurnStatus.RUNNING  # as the dead process left it

    write_script(home / "script.json", final_delay=0)
    second = start(home, site, "--until-idle")
    _out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err

    turn = store.get(turn_id)
    assert (turn.status, turn.output, turn.attempt) == (
        TurnStatus.COMPLETED,
        "the visit is done",
        2,
    )
    assert (home / "counter.txt").read_text().splitlines() == ["side-effect"]  # never twice
    steps = store.steps(turn_id)
    assert [s.kind for s in steps].count("tool_call") == 1
    tool_step = next(s for s in steps if s.kind == "tool_call")
    assert tool_step.attempt == 1
    assert [s.kind for s in steps if s.attempt == 2] == ["prompt_build", "model_call"]
    store.close()
