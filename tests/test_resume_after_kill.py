"""A real `toolang run` killed between a tool call and the final answer resumes after a
restart without running that tool again: the tool's side effect (a line appended to a
file) is counted."""

from __future__ import annotations

import time

import pytest
from kill_helpers import install_kit, kit_environment, start_kit_runtime, write_script

from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, SubmitRules, TurnStatus
from toolang_core.testing.processes import KILL_AND_RESUME_CONFIG, kill_when

pytestmark = pytest.mark.slow  # real processes killed mid-turn and restarted

CONFIG = KILL_AND_RESUME_CONFIG


def test_a_turn_killed_after_its_tool_call_resumes_without_running_the_tool_again(tmp_path):
    site = tmp_path / "site"
    install_kit(site)
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

    first = start_kit_runtime(home, kit_environment(home, site))
    kill_when(
        first,
        lambda: any(s.kind == "tool_call" and s.status != "intent" for s in store.steps(turn_id)),
        60,
        "the tool call to be recorded",
    )
    assert (home / "counter.txt").read_text().splitlines() == ["side-effect"]
    assert store.get(turn_id).status is TurnStatus.RUNNING  # as the dead process left it

    write_script(home / "script.json", final_delay=0)
    second = start_kit_runtime(home, kit_environment(home, site), "--until-idle")
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
