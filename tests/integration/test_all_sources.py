"""Every turn source installed and running together in one `toolang run` process.

Runs in the tox `integration` env, where every plugin of the repository is installed;
entry points are discovered for real.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from toolang_core.testing.cli import run_toolang

SOURCES = ["chat", "chore", "invoke", "task", "will"]
CONFIG = """
[runtime]
executor = "echo"
sources = ["chat", "chore", "invoke", "task", "will"]
poll_seconds = 0.05

[plugins.source-chore]
poll_seconds = 0.2
chores = [{ key = "tick", schedule = "every 1 seconds", input = "chore says hi" }]

[plugins.source-task]
poll_seconds = 0.2

[plugins.source-will]
poll_seconds = 0.2
"""


def test_plugins_are_discovered_through_entry_points(tmp_path):
    result = run_toolang("plugins", cwd=tmp_path)
    names = {row["name"] for row in json.loads(result.stdout)}
    assert {f"source-{s}" for s in SOURCES} <= names


def test_all_five_sources_feed_one_runtime(tmp_path: Path):
    (tmp_path / "toolang.toml").write_text(CONFIG)
    will = tmp_path / "agents" / "planner" / "will.md"
    will.parent.mkdir(parents=True)
    will.write_text("---\ninterval: 1\n---\nwill says hi\n")
    assert run_toolang("tasks", "add", "Ship", "--ref", "ship", cwd=tmp_path).returncode == 0

    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolang_core", "run"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not json.loads(run_toolang("status", "--json", cwd=tmp_path).stdout or "{}").get(
            "runtime_running"
        ):
            assert time.monotonic() < deadline, "the runtime never started"
            time.sleep(0.1)
        chat = run_toolang("chat", "chat says hi", cwd=tmp_path, timeout=60)
        assert (chat.returncode, chat.stdout) == (0, "chat says hi\n"), chat.stderr
        invoked = run_toolang("invoke", "invoke says hi", cwd=tmp_path, timeout=60)
        assert (invoked.returncode, invoked.stdout) == (0, "invoke says hi\n"), invoked.stderr
        deadline = time.monotonic() + 60
        done: set[str] = set()
        while time.monotonic() < deadline and done != set(SOURCES):
            turns = json.loads(
                run_toolang("turns", "list", "--json", "--limit", "200", cwd=tmp_path).stdout
            )
            done = {t["source"] for t in turns if t["status"] == "completed"}
            time.sleep(0.2)
        assert done == set(SOURCES)
        threads = {
            t["thread_id"]
            for t in json.loads(
                run_toolang("threads", "list", "--json", "--limit", "200", cwd=tmp_path).stdout
            )
        }
        assert {"cli:default", "task:ship", "chore:tick", "will:planner"} <= threads
        assert any(t.startswith("invoke:") for t in threads)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err


def test_init_adds_a_demo_chore_that_makes_work_flow(tmp_path):
    assert run_toolang("init", cwd=tmp_path).returncode == 0
    assert "[plugins.source-chore]" in (tmp_path / "toolang.toml").read_text()
    assert run_toolang("init", "--exist-ok", cwd=tmp_path).stdout.startswith("keeping")
    assert run_toolang("doctor", cwd=tmp_path).returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolang_core", "run"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        done = []
        while time.monotonic() < deadline and not done:
            result = run_toolang(
                "turns", "list", "--json", "--thread", "chore:heartbeat", cwd=tmp_path
            )
            done = [t for t in json.loads(result.stdout or "[]") if t["status"] == "completed"]
            time.sleep(0.5)
        assert done, "the demo chore never ran"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert "turn.finished" in err
