"""Spend limits seen from the real ``toolang`` command: a turn of a real ``toolang run``
stopped by ``[limits]``, a request's own limit from ``toolang submit``, and today's
usage in ``toolang status`` (a scripted model reporting usage, in a distribution)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolang_core.testing.cli import run_toolang
from toolang_core.testing.dists import make_distribution

CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.05
shutdown_grace_seconds = 0.2

[models]
default = "scripted"

[limits]
max_tokens_per_turn = 1000
owner_daily_tokens = 5000
"""

USAGE = {"input_tokens": 300, "output_tokens": 20, "cached_tokens": 100}
STEPS = [
    {"tool_calls": [{"id": f"c{i}", "name": "noop", "params": {"label": str(i)}}], "usage": USAGE}
    for i in range(6)
]
TOOLS = '''
from toolang_core import Tool, hookimpl

def noop(label: str) -> str:
    """Do nothing."""
    return "ok"

@hookimpl
def toolang_register_tools(register):
    register(Tool.from_function(noop, blocking=False))
'''


@pytest.fixture
def home(tmp_path: Path) -> Path:
    make_distribution(
        tmp_path / "site",
        "toolang-test-spend",
        entry_points={
            "toolang": {
                "scripted": "toolang_core.testing.script_file_plugin",
                "noop-tool": "noop_tool",
            }
        },
        modules={"noop_tool": TOOLS},
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "toolang.toml").write_text(CONFIG)
    (home / "script.json").write_text(json.dumps([*STEPS, {"text": "done"}]))
    return home


def toolang(home: Path, *args: str):
    ran = run_toolang(
        *args,
        cwd=home,
        pythonpath=[home.parent / "site"],
        env={
            "TOOLANG_LOAD_PLUGINS": "scripted,noop-tool",
            "TOOLANG_SCRIPT": str(home / "script.json"),
        },
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    return ran


def test_a_real_runtime_stops_a_turn_at_its_limit_and_status_shows_the_usage(home):
    toolang(home, "submit", "go", "--thread", "cli:a", "--owner", "ada")
    toolang(home, "submit", "go", "--thread", "cli:b", "--owner", "bob", "--max-model-calls", "1")
    toolang(home, "run", "--until-idle", "--no-sources")

    turns = {t["thread_id"]: t for t in json.loads(toolang(home, "turns", "list", "--json").stdout)}
    ada, bob = turns["cli:a"], turns["cli:b"]
    assert (ada["status"], ada["outcome"]) == ("failed", "usage_limit")
    assert "this turn used 1280 tokens" in ada["error"]  # 4 calls of 320: the 4th reached 1000
    assert "max_tokens_per_turn = 1000" in ada["error"]
    assert (bob["status"], bob["outcome"]) == ("failed", "usage_limit")
    assert "(max_model_calls = 1)" in bob["error"]

    shown = json.loads(toolang(home, "status", "--json").stdout)["usage_today"]
    assert (shown["total_tokens"], shown["model_calls"], shown["cached_tokens"]) == (1600, 5, 500)
    assert shown["owners"]["ada"]["total_tokens"] == 1280
    assert shown["owners"]["bob"]["total_tokens"] == 320
    assert shown["limits"] == {
        "max_tokens_per_turn": 1000,
        "max_model_calls": None,
        "owner_daily_tokens": 5000,
    }
    text = toolang(home, "status").stdout
    assert "usage     today (UTC): 1600 tokens (1500 input, 100 output, 500 cached)" in text
    assert "  ada: 1280 tokens of 5000 each, 4 model calls" in text
    assert "limits    max_tokens_per_turn = 1000" in text


def test_a_bad_limit_in_the_config_is_a_clear_error(home):
    (home / "toolang.toml").write_text(CONFIG.replace("= 1000", "= -1"))
    ran = run_toolang("status", cwd=home)
    assert ran.returncode != 0
    assert "limits.max_tokens_per_turn: expected a number >= 1, found -1" in ran.stderr
    assert "Traceback" not in ran.stderr
