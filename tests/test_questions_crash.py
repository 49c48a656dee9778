"""A real `toolang run` killed (SIGKILL) while its turn waits on an ``ask_person``
question: after a restart the question is still open, a person answers it from the CLI,
and the turn finishes — the model is called once more, the tool call made before the
question is not repeated, and nobody is asked twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kill_helpers import install_kit

from toolang_core import ApprovalKeyFile
from toolang_core.questions import QuestionBook
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, SubmitRules, TurnStatus
from toolang_core.testing.processes import (
    KILL_AND_RESUME_CONFIG,
    kill_when,
    start_toolang_run,
    wait_for,
)

pytestmark = pytest.mark.slow  # real processes killed mid-turn and restarted

SCRIPT = [
    {"tool_calls": [{"id": "c1", "name": "count_visit", "params": {"label": "side-effect"}}]},
    {"tool_calls": [{"id": "q1", "name": "ask_person", "params": {"question": "Which city?"}}]},
    {"text": "off to the city you chose"},
]


def environment(home: Path, site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(
        TOOLANG_LOAD_PLUGINS="scripted,counter-tool",
        TOOLANG_SCRIPT=str(home / "script.json"),
        TOOLANG_SCRIPT_LOG=str(home / "calls.log"),
        COUNTER_FILE=str(home / "counter.txt"),
        PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
    )
    return env


def model_calls(home: Path) -> list[int]:
    """The script step each model call asked for, across both processes."""
    return [int(line) for line in (home / "calls.log").read_text().splitlines()]


def test_a_question_open_across_a_kill_is_answered_after_the_restart(tmp_path):
    site = tmp_path / "site"
    install_kit(site)
    home = tmp_path / "home"
    home.mkdir()
    (home / "toolang.toml").write_text(KILL_AND_RESUME_CONFIG)
    (home / "script.json").write_text(json.dumps(SCRIPT))
    env = environment(home, site)
    store = SQLiteStore(home / ".toolang" / "toolang.db")
    key = ApprovalKeyFile(home / ".toolang" / "approval.key")  # made by the first run
    book = QuestionBook(store, key=key)
    turn_id = store.submit(
        NewTurnRequest(source="chat", thread_id="cli:trip", input="plan my trip"),
        SubmitRules("chat", 10),
        now=time.time(),
    ).id

    first = start_toolang_run(home, env, home / "first.log", "--no-sources")
    kill_when(
        first,  # asked, and parked (the question is written before the turn parks)
        lambda: (
            store.get(turn_id).status is TurnStatus.AWAITING_APPROVAL and book.for_turn(turn_id)
        ),
        60,
        "the question to be asked",
    )
    (asked,) = book.list("open")
    assert store.get(turn_id).status is TurnStatus.AWAITING_APPROVAL  # as the dead run left it
    assert model_calls(home) == [0, 1]

    second = start_toolang_run(home, env, home / "second.log", "--no-sources")
    try:
        # the restarted runtime took the turn back and waits on the same question
        wait_for(
            lambda: (
                (t := store.get(turn_id)).attempt == 2 and t.status is TurnStatus.AWAITING_APPROVAL
            ),
            60,
            "the resumed turn to wait on its question again",
        )
        assert [q.id for q in book.list("open")] == [asked.id]
        answered = subprocess.run(
            [sys.executable, "-m", "toolang_core", "questions", "answer", asked.id, "Lisbon"],
            cwd=home,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert answered.returncode == 0, answered.stderr
        wait_for(lambda: store.get(turn_id).status.is_terminal, 60, "the turn to finish")
    finally:
        second.terminate()
        second.wait(timeout=60)

    turn = store.get(turn_id)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "off to the city you chose")
    assert model_calls(home) == [0, 1, 2]  # the model was called once more, only
    assert (home / "counter.txt").read_text().splitlines() == ["side-effect"]  # never twice
    calls = [
        (s.data["call"]["name"], s.attempt) for s in store.steps(turn_id) if s.kind == "tool_call"
    ]
    # count_visit ran in the first run only; ask_person, idempotent, was taken up again by
    # the second run under the same key and found its question (and then its answer)
    assert calls == [("count_visit", 1), ("ask_person", 2)]
    (question,) = book.list(None)  # nobody was asked twice
    assert (question.status, question.answer) == ("answered", "Lisbon")
    store.close()
