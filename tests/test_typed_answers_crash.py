"""A real `toolang run` killed between two attempts at a typed answer resumes after a
restart: the tool call made before is not made again, the rejected attempt is not
asked again (its model call and its check were stored when it was rejected), and the
model is called once more — for the attempt that was cut off."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from kill_helpers import install_kit, kit_environment, start_kit_runtime

from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, SubmitRules, TurnStatus
from toolang_core.testing.processes import KILL_AND_RESUME_CONFIG, kill_when

pytestmark = pytest.mark.slow  # real processes killed mid-turn and restarted

LONG_WAIT = KILL_AND_RESUME_CONFIG + (
    "\n[models.retry]\nattempts = 5\ninitial_wait_seconds = 600\nmax_wait_seconds = 600\n"
    "jitter = 0\n"
)
"""The first run: the second attempt's model call is rate limited, a wait it never
lives to finish (where the test kills it, between the attempts)."""
SHORT_WAIT = KILL_AND_RESUME_CONFIG + (
    "\n[models.retry]\nattempts = 5\ninitial_wait_seconds = 0.1\nmax_wait_seconds = 0.2\n"
)
SCHEMA = {"type": "object", "properties": {"visits": {"type": "integer"}}, "required": ["visits"]}


def write_script(path: Path, third: dict[str, object]) -> None:
    steps = [
        {"tool_calls": [{"id": "c1", "name": "count_visit", "params": {"label": "side-effect"}}]},
        {"text": "I visited once."},  # not JSON: rejected, sent back
        third,
    ]
    path.write_text(json.dumps(steps), encoding="utf-8")


def start(home: Path, site: Path, *extra: str) -> subprocess.Popen[str]:
    env = kit_environment(home, site, TOOLANG_SCRIPT_LOG=str(home / "calls.txt"))
    return start_kit_runtime(home, env, *extra, stdout=subprocess.DEVNULL)


def test_a_runtime_killed_between_typed_attempts_asks_once_more_and_runs_no_tool_again(
    tmp_path,
):
    site = tmp_path / "site"
    install_kit(site)
    home = tmp_path / "home"
    home.mkdir()
    (home / "toolang.toml").write_text(LONG_WAIT)
    write_script(home / "script.json", {"error": "slow down", "error_kind": "rate_limit"})
    store = SQLiteStore(home / ".toolang" / "toolang.db")
    turn_id = store.submit(
        NewTurnRequest(
            source="chat",
            thread_id="cli:typed",
            input="visit once, then report",
            meta={"output_schema": SCHEMA},
        ),
        SubmitRules("chat", 10),
        now=time.time(),
    ).id
    waiting = f"{turn_id}:model:2:try:1"

    first = start(home, site)
    kill_when(first, lambda: store.find_step(waiting) is not None, 60, "the second attempt")
    rejected = store.find_step(f"{turn_id}:output:1")
    assert rejected is not None
    assert (rejected.status, rejected.data["attempt"], rejected.data["valid"]) == (
        "failed",
        1,
        False,
    )
    assert (home / "counter.txt").read_text().splitlines() == ["side-effect"]
    assert (home / "calls.txt").read_text().splitlines() == ["0", "1", "2"]

    (home / "toolang.toml").write_text(SHORT_WAIT)
    write_script(home / "script.json", {"text": '{"visits": 1}'})
    second = start(home, site, "--until-idle")
    _out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err

    turn = store.get(turn_id)
    assert (turn.status, json.loads(turn.output or ""), turn.attempt) == (
        TurnStatus.COMPLETED,
        {"visits": 1},
        2,
    )
    assert (home / "counter.txt").read_text().splitlines() == ["side-effect"]  # never twice
    # the restart asked the model once: the cut-off attempt, not the rejected one
    assert (home / "calls.txt").read_text().splitlines() == ["0", "1", "2", "2"]
    steps = store.steps(turn_id)
    assert [s.kind for s in steps].count("tool_call") == 1
    checks = [(s.data["attempt"], s.data["valid"]) for s in steps if s.kind == "output_check"]
    assert checks == [(1, False), (2, True)]
    store.close()
