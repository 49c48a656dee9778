"""`toolang plugins`, `hooks`, `doctor` and `--help` with broken plugins installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plugin_dists import install_test_plugins

from toolang_core.testing import make_distribution
from toolang_core.testing.cli import assert_no_traceback

TEST_PLUGINS = "good,broken,typo,raiser,badargs,dup,spy"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"

    def make(name: str, version: str = "1.0", **kwargs):
        return make_distribution(root, name, version, **kwargs)

    install_test_plugins(make, tmp_path / "spy-marker")
    return root


@pytest.fixture
def run(cli_run, site):
    def run(*args: str, **env: str):
        result = cli_run(
            *args, pythonpath=[site], env={"TOOLANG_LOAD_PLUGINS": TEST_PLUGINS, **env}
        )
        assert_no_traceback(result)
        return result

    return run


def by_name(rows):
    return {(row["name"], row["distribution"]): row for row in rows}


def test_plugins_lists_only_healthy_plugins_by_default(run):
    result = run("plugins")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [row["name"] for row in rows] == ["dup", "good", "spy"]
    good = by_name(rows)[("good", "toolang-test-good")]
    assert good["version"] == "1.2.3"
    assert good["entry_point"] == "tl_good"
    assert good["hooks"] == ["toolang_register_tools"]
    assert good["provides"] == {"tools": ["good_echo"]}


def test_plugins_all_shows_every_failure_with_its_details_and_exits_0(run):
    result = run("plugins", "--all")
    assert result.returncode == 0, result.stderr
    rows = by_name(json.loads(result.stdout))
    broken = rows[("broken", "toolang-test-broken")]
    assert broken["status"] == "failed"
    assert broken["error"]["stage"] == "import"
    assert "tl_does_not_exist" in broken["error"]["message"]
    typo = rows[("typo", "toolang-test-typo")]
    assert (typo["status"], typo["error"]["hook"]) == ("failed", "toolang_regster_memory")
    raiser = rows[("raiser", "toolang-test-raiser")]
    assert raiser["status"] == "failed"
    assert raiser["error"] == {
        "stage": "collect",
        "hook": "toolang_register_tools",
        "message": "RuntimeError: boom while registering tools",
    }
    assert rows[("dup", "toolang-test-dup-b")]["status"] == "duplicate"
    assert rows[("dup", "toolang-test-dup-a")]["status"] == "loaded"
    # The failures were logged on stderr, never mixed into the JSON on stdout.
    assert "plugin.failed" in result.stderr


def test_denied_plugin_shows_as_disabled_and_is_never_imported(run, tmp_path):
    result = run("plugins", "--all", TOOLANG_DISABLE_PLUGINS="spy")
    rows = by_name(json.loads(result.stdout))
    spy = rows[("spy", "toolang-test-spy")]
    assert (spy["status"], spy["reason"]) == ("disabled", "disabled by TOOLANG_DISABLE_PLUGINS")
    assert not (tmp_path / "spy-marker").exists()


def test_strict_fails_on_the_first_failure_naming_distribution_and_entry_point(run):
    result = run("--strict", "plugins")
    assert result.returncode == 3
    assert "toolang-test-broken 1.2.3" in result.stderr
    assert "entry point broken = tl_broken" in result.stderr
    assert result.stdout == ""


def test_strict_from_the_environment(run):
    result = run("plugins", TOOLANG_STRICT_PLUGINS="1")
    assert result.returncode == 3
    assert "toolang-test-broken" in result.stderr


@pytest.mark.parametrize(
    "args",
    # `plugin --help` was the built-in group here; `plugin` now comes with toolang-authoring
    [("--help",), ("hooks",), ("--version",), ("init",), ("turns", "--help")],
)
def test_other_commands_keep_working_with_broken_plugins(run, args):
    result = run(*args)
    assert result.returncode == 0, result.stderr


def test_hooks_shows_what_is_actually_registered(run):
    result = run("hooks", "--json")
    families = {f["family"]: f for f in json.loads(result.stdout)}
    tools = families["tools"]["hooks"][0]
    assert tools == {
        "hook": "toolang_register_tools",
        "plugins": ["good", "questions", "delegation", "memory-tools"],
    }
    memory = families["memory"]["hooks"][0]
    assert memory["plugins"] == ["dup"]
    chain = [entry["stage"] for entry in families["tool-hooks"]["hooks"] if "stage" in entry]
    assert chain == [
        "SecurityFilter",
        "ApprovalGate",
        "execute",
        "SecurityFilter",
        "LearningObserver",
        "KnowledgeSaver",
        "EventPublisher",
    ]
    others = [e["hook"] for e in families["tool-hooks"]["hooks"] if "stage" not in e]
    assert others == ["toolang_register_redactors", "toolang_prompt_notes"]


def test_doctor_reports_each_broken_plugin_and_exits_1(run):
    result = run("doctor")
    assert result.returncode == 1
    for needle in (
        "toolang-test-broken",
        "toolang-test-typo",
        "toolang-test-raiser",
        "toolang-test-dup-b",
        "toolang-test-badargs",
    ):
        assert needle in result.stdout
    assert "problem(s) found" in result.stdout


def test_doctor_passes_when_only_healthy_plugins_load(run):
    result = run("doctor", TOOLANG_LOAD_PLUGINS="good")
    assert result.returncode == 0, result.stdout
    assert (
        "7 plugin(s) active: delegation, evaluators, good, memory-tools, questions, "
        "route-keywords, store-sqlite" in result.stdout
    )


def test_doctor_fails_on_a_deny_list_name_no_plugin_has(run):
    # a typo in the deny-list leaves the plugin it meant to turn off running
    result = run("doctor", TOOLANG_LOAD_PLUGINS="good", TOOLANG_DISABLE_PLUGINS="goood")
    assert result.returncode == 1, result.stdout
    assert (
        "FAIL  plugins    TOOLANG_DISABLE_PLUGINS names 'goood', but no installed plugin "
        "has that entry-point or distribution name (did you mean 'good'?)" in result.stdout
    )
    assert "plugin=None" not in result.stderr


def test_plugin_commands_are_added_and_clashes_refused(cli_run, tmp_path):
    site = tmp_path / "cmdsite"
    make_distribution(
        site,
        "toolang-test-cmd",
        entry_points={"toolang": {"cmd": "tl_cmd"}},
        modules={
            "tl_cmd": '''
import click
from toolang_core import hookimpl

@hookimpl
def toolang_register_commands(cli):
    @cli.command()
    def hello():
        """Say hello."""
        click.echo("hello from a plugin")
'''
        },
    )
    make_distribution(
        site,
        "toolang-test-clash",
        entry_points={"toolang": {"clash": "tl_clash"}},
        modules={
            "tl_clash": """
import click
from toolang_core import hookimpl

@hookimpl
def toolang_register_commands(cli):
    @cli.command()
    def init():
        click.echo("hijacked")
"""
        },
    )
    env = {"TOOLANG_LOAD_PLUGINS": "cmd,clash"}
    result = cli_run("hello", pythonpath=[site], env=env)
    assert (result.returncode, result.stdout) == (0, "hello from a plugin\n")
    listing = cli_run("--help", pythonpath=[site], env=env)
    assert "hello" in listing.stdout
    init = cli_run("init", pythonpath=[site], env=env)
    assert (init.returncode, "hijacked" in init.stdout) == (0, False)
    rows = by_name(json.loads(cli_run("plugins", "--all", pythonpath=[site], env=env).stdout))
    clash = rows[("clash", "toolang-test-clash")]
    assert clash["status"] == "failed"
    assert clash["error"]["hook"] == "toolang_register_commands"
    assert "built into toolang" in clash["error"]["message"]
