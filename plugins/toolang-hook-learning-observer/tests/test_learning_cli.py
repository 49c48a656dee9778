"""``toolang learning stats``, run as a real subprocess over the plugin's real database."""

from __future__ import annotations

import json
import time

from learning_helpers import make_runtime, observe

ONLY_THIS_PLUGIN = {"TOOLANG_LOAD_PLUGINS": "hook-learning-observer"}


def stats(toolang_cli, *args):
    return toolang_cli("learning", "stats", *args, env=ONLY_THIS_PLUGIN)


def recorded(toolang_runtime):
    """20 fast echo calls by the assistant, 4 fs_write calls (3 failed) by the operator."""
    runtime = make_runtime(toolang_runtime)
    for ms in range(1, 21):
        observe(runtime, "echo", duration_ms=float(ms))
    runtime.clock = lambda: time.time() - 3 * 86_400
    observe(runtime, "fs_write", agent="operator", ok=False, error="PermissionError: old")
    runtime.clock = time.time
    observe(runtime, "fs_write", agent="operator", duration_ms=5.0)
    observe(runtime, "fs_write", agent="operator", ok=False, error="PermissionError: newer")
    observe(runtime, "fs_write", agent="operator", ok=False, error=f"PermissionError: {'x' * 90}")
    return runtime


def test_without_a_database_it_says_nothing_was_recorded(toolang_cli):
    done = stats(toolang_cli)
    assert (done.returncode, done.stdout.strip()) == (
        0,
        "no tool outcomes recorded yet: they are recorded while `toolang run` serves turns",
    )


def test_json_without_a_database_is_an_empty_list(toolang_cli):
    done = stats(toolang_cli, "--json")
    assert (done.returncode, json.loads(done.stdout)) == (0, [])


def test_json_gives_calls_failures_latency_and_the_last_error(toolang_cli, toolang_runtime):
    recorded(toolang_runtime)
    done = stats(toolang_cli, "--json")
    assert done.returncode == 0, done.stderr
    echo, fs_write = json.loads(done.stdout)
    assert (echo["agent"], echo["tool"], echo["calls"], echo["failures"]) == (
        "assistant",
        "echo",
        20,
        0,
    )
    assert (echo["median_ms"], echo["p95_ms"], echo["last_error"]) == (10.5, 19.0, None)
    assert (fs_write["agent"], fs_write["calls"], fs_write["failures"]) == ("operator", 4, 3)
    assert fs_write["failure_rate"] == 0.75
    assert fs_write["last_error"] == f"PermissionError: {'x' * 90}"
    assert time.time() - fs_write["last_error_at"] < 600


def test_the_table_shows_one_line_per_agent_and_tool(toolang_cli, toolang_runtime):
    recorded(toolang_runtime)
    done = stats(toolang_cli)
    header, echo, fs_write = done.stdout.splitlines()
    assert header.split()[:5] == ["AGENT", "TOOL", "CALLS", "FAILED", "RATE"]
    assert echo.split()[:8] == ["assistant", "echo", "20", "0", "0%", "10.5", "19.0", "-"]
    assert fs_write.split()[:5] == ["operator", "fs_write", "4", "3", "75%"]
    assert "PermissionError: xxx" in fs_write
    assert fs_write.endswith("s ago)")


def test_agent_tool_and_since_narrow_the_outcomes(toolang_cli, toolang_runtime):
    recorded(toolang_runtime)
    by_agent = json.loads(stats(toolang_cli, "--agent", "operator", "--json").stdout)
    assert [(r["tool"], r["calls"]) for r in by_agent] == [("fs_write", 4)]
    by_tool = json.loads(stats(toolang_cli, "--tool", "echo", "--json").stdout)
    assert [(r["agent"], r["calls"]) for r in by_tool] == [("assistant", 20)]
    recent = json.loads(stats(toolang_cli, "--since", "24h", "--json").stdout)
    assert [(r["tool"], r["calls"], r["failures"]) for r in recent] == [
        ("echo", 20, 0),
        ("fs_write", 3, 2),
    ]


def test_no_matching_outcomes_is_said_plainly(toolang_cli, toolang_runtime):
    recorded(toolang_runtime)
    done = stats(toolang_cli, "--agent", "nobody")
    assert (done.returncode, done.stdout.strip()) == (0, "no tool outcomes match")


def test_a_bad_since_is_a_usage_error(toolang_cli):
    done = stats(toolang_cli, "--since", "yesterday")
    assert done.returncode == 2
    assert "expected a duration like 30m, 24h or 7d, found 'yesterday'" in done.stderr
