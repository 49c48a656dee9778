"""Chaos: a real `toolang run` killed with SIGKILL again and again under load, with two
tools that append a line per call — one not idempotent, one declared idempotent.

Every kill lands right after one of the tools appended its line and before its result
is recorded (the tool lingers in that window), so the calls it cuts off are in doubt
with their effect done: the worst case. Afterwards: no turn is lost; the non-idempotent
effect happened at most once per turn, and every call of it either recorded its result
or is shown in doubt in the trace; the idempotent tool ran again where it was cut off,
always under the same idempotency key, and completed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from kill_helpers import effect_lines, install_effects_kit

from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, SubmitRules, TurnStatus
from toolang_core.testing.processes import wait_for

pytestmark = pytest.mark.slow  # real processes killed at many points

TURNS = 40
KILLS = 12

CONFIG = """
[runtime]
executor = "agent"
lease_seconds = 30.0
poll_seconds = 0.05
shutdown_grace_seconds = 0.2
max_attempts = 100

[scheduler]
max_running = 4

[models]
default = "scripted"
"""

SCRIPT = [
    {
        "tool_calls": [
            {"id": "once", "name": "append_once", "params": {"label": "once"}},
            {"id": "idem", "name": "append_idempotent", "params": {"label": "idem"}},
        ]
    },
    {"text": "both appended"},
]


def start(home: Path, site: Path, *extra: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(
        TOOLANG_LOAD_PLUGINS="scripted,effect-tools",
        TOOLANG_SCRIPT=str(home / "script.json"),
        EFFECT_DIR=str(home),
        EFFECT_JITTER_SECONDS="0.02",
        EFFECT_LINGER_SECONDS="0.3",
        PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
    )
    return subprocess.Popen(
        [sys.executable, "-m", "toolang_core", "run", "--no-sources", *extra],
        cwd=home,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def wait_for_new_line(path: Path, before: int, runtime: subprocess.Popen[str]) -> None:
    wait_for(
        lambda: lines(path) > before or runtime.poll() is not None,
        60,
        f"a new line in {path.name}",
    )


def test_kill_9_under_load_never_repeats_a_non_idempotent_effect(tmp_path):
    site = tmp_path / "site"
    install_effects_kit(site)
    home = tmp_path / "home"
    home.mkdir()
    (home / "toolang.toml").write_text(CONFIG)
    (home / "script.json").write_text(json.dumps(SCRIPT))
    store = SQLiteStore(home / ".toolang" / "toolang.db")
    ids = [
        store.submit(
            NewTurnRequest(source="chat", thread_id=f"chat:{n}", input=f"turn {n}"),
            SubmitRules("chat", 10),
            now=time.time(),
        ).id
        for n in range(TURNS)
    ]
    once, idem = home / "once.txt", home / "idem.txt"
    rng = random.Random(14)
    kills = 0
    while kills < KILLS:
        # Alternate which tool's effect the kill follows, so both kinds are cut off.
        watched = once if kills % 2 == 0 else idem
        runtime = start(home, site)
        try:
            wait_for_new_line(watched, lines(watched), runtime)
            # the tool lingers 0.3 s after its effect: kill at a random moment inside it
            time.sleep(rng.uniform(0, 0.1))
        finally:
            runtime.send_signal(signal.SIGKILL)
            _, err = runtime.communicate(timeout=30)
        assert runtime.returncode == -signal.SIGKILL, err
        kills += 1

    final = start(home, site, "--until-idle")
    _, err = final.communicate(timeout=120)
    assert final.returncode == 0, err

    # no turn lost
    turns = [store.get(turn_id) for turn_id in ids]
    assert [t.status for t in turns] == [TurnStatus.COMPLETED] * TURNS, [
        (t.id, t.status, t.error) for t in turns if t.status is not TurnStatus.COMPLETED
    ]
    assert all(t.output == "both appended" for t in turns)

    once_per_turn = Counter(turn for turn, _, _ in effect_lines(once))
    idem_keys: dict[str, set[str]] = {}
    for turn, _, key in effect_lines(idem):
        idem_keys.setdefault(turn, set()).add(key)
    in_doubt = {"told_model": 0, "rerun": 0}
    for turn_id in ids:
        # at most once, and accounted for: a recorded result, or shown in doubt
        assert once_per_turn[turn_id] <= 1, f"turn {turn_id}: the effect happened twice"
        step = store.find_step(f"{turn_id}:tool:once")
        doubt = step.data.get("in_doubt")
        if doubt is None:
            assert (step.status, once_per_turn[turn_id]) == ("completed", 1)
        else:
            assert doubt["decision"] == "told_model"
            assert step.data["result"]["error_type"] == "in_doubt"
            assert "may already have run" in step.data["result"]["error"]
            in_doubt["told_model"] += 1
        # the idempotent tool always completes, under one key for every run of it
        step = store.find_step(f"{turn_id}:tool:idem")
        assert step.status == "completed" and step.data["result"]["ok"]
        assert idem_keys[turn_id] == {f"{turn_id}:tool:idem"}
        if step.data.get("in_doubt"):
            assert step.data["in_doubt"]["decision"] == "rerun"
            in_doubt["rerun"] += 1
    # the kills did cut calls off, of both kinds
    assert in_doubt["told_model"] >= 1 and in_doubt["rerun"] >= 1, in_doubt
    assert len(idem_keys) == TURNS  # every turn's idempotent call ran, under its one key

    # the trace shows the in-doubt call, in text and in JSON
    shown = next(t for t in ids if store.find_step(f"{t}:tool:once").data.get("in_doubt"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    text = subprocess.run(
        [sys.executable, "-m", "toolang_core", "turns", "trace", shown],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "IN DOUBT" in text and "NOT run again" in text, text
    as_json = json.loads(
        subprocess.run(
            [sys.executable, "-m", "toolang_core", "turns", "trace", shown, "--json"],
            cwd=home,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    )
    assert {d["tool"]: d["decision"] for d in as_json["in_doubt"]}["append_once"] == "told_model"
    store.close()
