"""``toolang agents pool`` and the doctor's pool check read the real execution store
(real subprocesses, this plugin and an agent-source plugin really installed).
``toolang teams``: toolang-teams' tests."""

from __future__ import annotations

import json

import pytest

from toolang_core.testing.cli import assert_no_traceback, run_toolang
from toolang_core.testing.pool import POOL_AGENTS_PLUGIN, install_pool_agents, pool_agents_home

ENV = {"TOOLANG_LOAD_PLUGINS": f"{POOL_AGENTS_PLUGIN},agent-pool"}


@pytest.fixture
def home(tmp_path, toolang_distribution, monkeypatch):
    monkeypatch.setenv("TOOLANG_LOAD_PLUGINS", ENV["TOOLANG_LOAD_PLUGINS"])
    pool_agents_home(tmp_path, toolang_distribution, ENV)
    return tmp_path


def cli(home, toolang_distribution, *args):
    result = run_toolang(*args, cwd=home, env=ENV, pythonpath=[toolang_distribution.root])
    assert_no_traceback(result)
    return result


def test_agents_pool_prints_health_latency_success_trust_and_the_selection(
    home, toolang_distribution
):
    report = json.loads(
        cli(home, toolang_distribution, "agents", "pool", "--capability", "survey", "--json").stdout
    )
    members = {m["name"]: m for m in report["members"]}
    assert members["good"]["health"] == "healthy"
    assert members["good"]["avg_latency_ms"] == 200 and members["good"]["success_rate"] == 1
    assert members["flaky"]["health"] == "unhealthy"
    assert members["fresh"]["health"] == "unknown" and members["fresh"]["trust"] == 0.5
    assert [c["name"] for c in report["selection"]["chosen"]] == ["good", "fresh"]
    text = cli(home, toolang_distribution, "agents", "pool").stdout
    assert text.splitlines()[0].split() == [
        "AGENT",
        "HEALTH",
        "LATENCY_MS",
        "SUCCESS",
        "CALLS",
        "TRUST",
        "PRICE",
        "CAPABILITIES",
    ]


def test_doctor_reports_unhealthy_pool_members(home, toolang_distribution):
    out = cli(home, toolang_distribution, "doctor").stdout
    assert "1 agent(s) unhealthy in the pool: flaky" in out
    assert (
        "flaky: 3 consecutive failure(s), success rate 0.00; last: model error: overloaded" in out
    )


def test_in_a_fresh_home_the_pool_shows_every_agent_health_unknown(
    tmp_path, toolang_distribution, monkeypatch
):
    """Before anything ran there is no execution store: the pool is every agent, never
    called — not an error (exit 4), and no store is created."""
    install_pool_agents(tmp_path, toolang_distribution)
    pool = cli(tmp_path, toolang_distribution, "agents", "pool", "--json")
    assert pool.returncode == 0, pool.stderr
    members = json.loads(pool.stdout)["members"]
    assert [(m["name"], m["health"], m["total_calls"]) for m in members] == [
        ("assistant", "unknown", 0),
        ("flaky", "unknown", 0),
        ("fresh", "unknown", 0),
        ("good", "unknown", 0),
    ]
    selected = cli(tmp_path, toolang_distribution, "agents", "pool", "--capability", "survey")
    assert selected.returncode == 0, selected.stderr
    assert "select('survey', 3): flaky (0.5), fresh (0.5), good (0.5)" in selected.stdout
    assert not (tmp_path / ".toolang" / "toolang.db").exists()
