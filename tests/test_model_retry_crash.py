"""A real `toolang run` killed while it waits to retry a rate-limited model call resumes
after a restart: the tool call made before is not made again, and the model is called
once more — from the failed attempt's step, stored before the wait began."""

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
"""The first run: a retry wait it never lives to finish."""
SHORT_WAIT = KILL_AND_RESUME_CONFIG + (
    "\n[models.retry]\nattempts = 5\ninitial_wait_seconds = 0.1\nmax_wait_seconds = 0.2\n"
)
"""The second run: what is left of the wait is cut to its max_wait_seconds."""


def write_script(path: Path, second: dict[str, object]) -> None:
    steps = [
        {"tool_calls": [{"id": "c1", "name": "count_visit", "params": {"label": "side-effect"}}]},
        second,
    ]
    path.write_text(json.dumps(steps), encoding="utf-8")


def test_a_runtime_killed_in_a_retry_wait_calls_the_model_once_more_and_no_tool_again(
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
        NewTurnRequest(source="chat", thread_id="cli:retry", input="visit once"),
        SubmitRules("chat", 10),
        now=time.time(),
    ).id
    waiting = f"{turn_id}:model:1:try:1"

    env = kit_environment(home, site, TOOLANG_SCRIPT_LOG=str(home / "calls.txt"))
    first = start_kit_runtime(home, env, stdout=subprocess.DEVNULL)
    kill_when(first, lambda: store.find_step(waiting) is not None, 60, "the failed attempt")
    attempt = store.find_step(waiting)
    assert attempt is not None
    assert (attempt.status, attempt.data["error_kind"], attempt.data["next"]) == (
        "failed",
        "rate_limit",
        "retry",
    )
    assert attempt.data["wait_seconds"] == 600
    assert (home / "counter.txt").read_text().splitlines() == ["side-effect"]
    assert (home / "calls.txt").read_text().splitlines() == ["0", "1"]
    assert store.get(turn_id).status is TurnStatus.RUNNING  # as the dead process left it

    (home / "toolang.toml").write_text(SHORT_WAIT)
    write_script(home / "script.json", {"text": "the visit is done"})
    second = start_kit_runtime(home, env, "--until-idle", stdout=subprocess.DEVNULL)
    _out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err

    turn = store.get(turn_id)
    assert (turn.status, turn.output, turn.attempt) == (
        TurnStatus.COMPLETED,
        "the visit is done",
        2,
    )
    assert (home / "counter.txt").read_text().splitlines() == ["side-effect"]  # never twice
    # the restart asked the model once: the call that was waiting, not the one before it
    assert (home / "calls.txt").read_text().splitlines() == ["0", "1", "1"]
    steps = store.steps(turn_id)
    assert [s.kind for s in steps].count("tool_call") == 1
    model_calls = [(s.idempotency_key, s.status) for s in steps if s.kind == "model_call"]
    assert model_calls == [
        (f"{turn_id}:model:0", "completed"),
        (waiting, "failed"),
        (f"{turn_id}:model:1", "completed"),
    ]
    store.close()
