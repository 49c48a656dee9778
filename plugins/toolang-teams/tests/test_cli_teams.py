"""``toolang teams list|show|disband`` read the real execution store (real subprocesses,
this plugin and an agent-source plugin really installed). The pool's own commands:
toolang-agent-pool's tests/test_cli_pool.py."""

from __future__ import annotations

import asyncio
import json

import pytest

from toolang_core import TaskRunController
from toolang_core.testing.cli import assert_no_traceback, run_toolang
from toolang_core.testing.pool import POOL_AGENTS_PLUGIN, install_pool_agents, pool_agents_home
from toolang_teams.coordinator import FormRequest, TeamCoordinator

ENV = {"TOOLANG_LOAD_PLUGINS": f"{POOL_AGENTS_PLUGIN},agent-pool,teams"}


@pytest.fixture
def home(tmp_path, toolang_distribution, monkeypatch):
    monkeypatch.setenv("TOOLANG_LOAD_PLUGINS", ENV["TOOLANG_LOAD_PLUGINS"])
    runtime = pool_agents_home(tmp_path, toolang_distribution, ENV)
    store = runtime.open_store()
    try:
        teams = TeamCoordinator(runtime, TaskRunController(store, runtime))
        asyncio.run(
            teams.form(
                FormRequest(
                    owner="ada",
                    parent_thread_id="chat:1",
                    goal="survey the capitals",
                    leader="assistant",
                    capability="survey",
                    workers=2,
                    id="team-9",
                )
            )
        )
    finally:
        store.close()
    return tmp_path


def cli(home, toolang_distribution, *args):
    result = run_toolang(*args, cwd=home, env=ENV, pythonpath=[toolang_distribution.root])
    assert_no_traceback(result)
    return result


def test_teams_list_show_and_disband(home, toolang_distribution):
    listed = json.loads(cli(home, toolang_distribution, "teams", "list", "--json").stdout)
    assert [(t["id"], t["status"]) for t in listed] == [("team-9", "active")]
    shown = cli(home, toolang_distribution, "teams", "show", "team-9").stdout
    assert "team team-9 (active): survey the capitals" in shown
    assert "worker    good active" in shown and "flaky" not in shown
    assert cli(home, toolang_distribution, "teams", "disband", "team-9").stdout.strip() == (
        "team team-9 disbanded"
    )
    again = json.loads(cli(home, toolang_distribution, "teams", "show", "team-9", "--json").stdout)
    assert again["status"] == "disbanded"
    missing = cli(home, toolang_distribution, "teams", "show", "nope")
    assert missing.returncode != 0 and "team 'nope' not found" in missing.stderr


def test_in_a_fresh_home_there_is_no_team_and_no_store_is_created(
    tmp_path, toolang_distribution, monkeypatch
):
    """Before anything ran there is no execution store and no team — not an error
    (exit 4), and no store is created."""
    install_pool_agents(tmp_path, toolang_distribution)
    teams = cli(tmp_path, toolang_distribution, "teams", "list", "--json")
    assert (teams.returncode, json.loads(teams.stdout)) == (0, []), teams.stderr
    assert not (tmp_path / ".toolang" / "toolang.db").exists()
