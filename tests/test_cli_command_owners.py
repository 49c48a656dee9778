"""A plugin's command runs after only its owner added its commands: which plugin adds
each command is cached (``owners-*.json``) under a key made of the plugins the host
found, so installing, removing or upgrading a distribution is seen at once."""

from __future__ import annotations

import shutil

import pytest

from toolang_core.testing import make_distribution
from toolang_core.testing.cli import run_toolang

# The hook leaves a marker when it is called: what a plugin's command module import costs.
COMMAND_PLUGIN = """
from pathlib import Path

import click
from toolang_core import hookimpl


@hookimpl
def toolang_register_commands(cli):
    Path({marker!r}).write_text("asked")

    @cli.command(name={command!r})
    def command():
        click.echo({answer!r})
"""


@pytest.fixture
def site(tmp_path):
    return tmp_path / "site"


def install(tmp_path, site, name, command, version="1.0"):
    """Distribution toolang-tools-NAME adding COMMAND; its hook marks ``asked-NAME``."""
    source = COMMAND_PLUGIN.format(
        marker=str(tmp_path / f"asked-{name}"), command=command, answer=f"{name} {version}"
    )
    return make_distribution(
        site, f"toolang-tools-{name}", version,
        entry_points={"toolang": {f"tools-{name}": f"tl_{name}"}},
        modules={f"tl_{name}": source},
    )  # fmt: skip


def run(tmp_path, site, *args, **env):
    return run_toolang(
        *args, cwd=tmp_path, pythonpath=[site],
        env={"TOOLANG_CACHE_DIR": str(tmp_path / "cache"), **env},
    )  # fmt: skip


def answer(tmp_path, site, command):
    result = run(tmp_path, site, command)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def asked(tmp_path):
    found = sorted(p.name.removeprefix("asked-") for p in tmp_path.glob("asked-*"))
    for marker in tmp_path.glob("asked-*"):
        marker.unlink()
    return found


def test_a_cached_command_asks_only_its_own_plugin(tmp_path, site):
    install(tmp_path, site, "weather", "weather")
    install(tmp_path, site, "tides", "tides")
    assert answer(tmp_path, site, "weather") == "weather 1.0"
    assert asked(tmp_path) == ["tides", "weather"]  # no cache yet: every plugin
    assert answer(tmp_path, site, "weather") == "weather 1.0"
    assert asked(tmp_path) == ["weather"]
    assert answer(tmp_path, site, "tides") == "tides 1.0"
    assert asked(tmp_path) == ["tides"]


def test_a_newly_installed_plugins_command_runs_at_once(tmp_path, site):
    install(tmp_path, site, "weather", "weather")
    assert answer(tmp_path, site, "weather") == "weather 1.0"
    install(tmp_path, site, "rain", "rain")
    assert answer(tmp_path, site, "rain") == "rain 1.0"
    assert answer(tmp_path, site, "weather") == "weather 1.0"
    asked(tmp_path)
    assert answer(tmp_path, site, "rain") == "rain 1.0"
    assert asked(tmp_path) == ["rain"]


def test_a_command_that_moved_to_another_plugin_runs_the_new_owner(tmp_path, site):
    old = install(tmp_path, site, "weather", "forecast")
    install(tmp_path, site, "tides", "tides")
    assert answer(tmp_path, site, "forecast") == "weather 1.0"
    shutil.rmtree(old)
    install(tmp_path, site, "sky", "forecast")
    assert answer(tmp_path, site, "forecast") == "sky 1.0"


def test_an_upgraded_plugin_runs_its_new_version_and_drops_its_old_command(tmp_path, site):
    old = install(tmp_path, site, "weather", "weather")
    assert answer(tmp_path, site, "weather") == "weather 1.0"
    shutil.rmtree(old)
    install(tmp_path, site, "weather", "forecast", version="2.0")
    assert answer(tmp_path, site, "forecast") == "weather 2.0"
    gone = run(tmp_path, site, "weather")
    assert gone.returncode != 0
    assert "No such command 'weather'" in gone.stderr


def test_a_disabled_plugins_command_is_not_run_from_the_cache(tmp_path, site):
    install(tmp_path, site, "weather", "weather")
    assert answer(tmp_path, site, "weather") == "weather 1.0"
    refused = run(tmp_path, site, "weather", TOOLANG_DISABLE_PLUGINS="tools-weather")
    assert refused.returncode != 0
    assert "No such command 'weather'" in refused.stderr


def test_a_cache_naming_a_plugin_that_no_longer_adds_the_command_falls_back(tmp_path, site):
    install(tmp_path, site, "weather", "weather")
    install(tmp_path, site, "tides", "tides")
    assert answer(tmp_path, site, "weather") == "weather 1.0"
    (cached,) = (tmp_path / "cache").glob("owners-*.json")
    cached.write_text('{"weather": "tools-tides", "tides": "tools-tides"}')
    assert answer(tmp_path, site, "weather") == "weather 1.0"
    cached.write_text("{not json")
    assert answer(tmp_path, site, "tides") == "tides 1.0"


def test_no_owners_are_cached_while_two_plugins_claim_one_command(tmp_path, site):
    install(tmp_path, site, "weather", "forecast")
    install(tmp_path, site, "sky", "forecast")
    first = run(tmp_path, site, "forecast")
    assert first.returncode == 0, first.stderr
    assert not list((tmp_path / "cache").glob("owners-*.json"))
    assert asked(tmp_path) == ["sky", "weather"]
    again = run(tmp_path, site, "forecast")
    assert again.stdout == first.stdout
    assert asked(tmp_path) == ["sky", "weather"]  # every time: the clash is reported again
