"""`toolang --help` lists every command from a cache keyed by what is installed and
configured: no plugin is imported while nothing changed, and any change is seen."""

from __future__ import annotations

import re

import pytest

from toolang_core.testing import make_distribution
from toolang_core.testing.cli import run_toolang

COMMAND_PLUGIN = """
from pathlib import Path
Path({marker!r}).write_text("imported")

import click
from toolang_core import hookimpl


@hookimpl
def toolang_register_commands(cli):
    @cli.command(name={command!r})
    def command():
        \"\"\"Tell the weather, from a plugin.\"\"\"
"""


@pytest.fixture
def site(tmp_path):
    return tmp_path / "site"


def install(site, marker, name, command):
    source = COMMAND_PLUGIN.format(marker=str(marker), command=command)
    make_distribution(
        site, f"toolang-tools-{name}", "1.0",
        entry_points={"toolang": {f"tools-{name}": f"tl_{name}"}},
        modules={f"tl_{name}": source},
    )  # fmt: skip


def help_of(tmp_path, site, **env):
    result = run_toolang(
        "--help", cwd=tmp_path, pythonpath=[site],
        env={"TOOLANG_CACHE_DIR": str(tmp_path / "cache"), **env},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_second_help_lists_plugin_commands_without_importing_any_plugin(tmp_path, site):
    marker = tmp_path / "weather-imported"
    install(site, marker, "weather", "weather")
    first = help_of(tmp_path, site)
    assert re.search(r"\n  weather +Tell the weather, from a plugin\.\n", first)
    assert marker.exists()
    marker.unlink()
    second = help_of(tmp_path, site)
    assert second == first
    assert not marker.exists()  # listed from the cache


def test_a_newly_installed_plugin_is_listed_at_once(tmp_path, site):
    install(site, tmp_path / "a", "weather", "weather")
    assert "tides" not in help_of(tmp_path, site)
    install(site, tmp_path / "b", "tides", "tides")
    assert re.search(r"\n  tides +Tell the weather, from a plugin\.\n", help_of(tmp_path, site))


def test_a_configuration_change_is_seen_at_once(tmp_path, site):
    install(site, tmp_path / "a", "weather", "weather")
    assert "weather" in help_of(tmp_path, site)
    (tmp_path / "toolang.toml").write_text('[plugins]\ndisable = ["tools-weather"]\n')
    assert "weather" not in help_of(tmp_path, site)
    assert "weather" not in help_of(tmp_path, site, TOOLANG_DISABLE_PLUGINS="")  # same file
    (tmp_path / "toolang.toml").unlink()
    assert "weather" not in help_of(tmp_path, site, TOOLANG_DISABLE_PLUGINS="tools-weather")


def test_a_cache_that_cannot_be_written_only_costs_time(tmp_path, site):
    install(site, tmp_path / "a", "weather", "weather")
    (tmp_path / "not-a-directory").write_text("")
    cache = str(tmp_path / "not-a-directory" / "cache")
    for _ in range(2):
        assert "weather" in help_of(tmp_path, site, TOOLANG_CACHE_DIR=cache)


def test_a_cache_file_that_is_not_json_is_ignored(tmp_path, site):
    install(site, tmp_path / "a", "weather", "weather")
    help_of(tmp_path, site)
    (cached,) = (tmp_path / "cache").glob("commands-*.json")
    cached.write_text("{not json")
    assert "weather" in help_of(tmp_path, site)


def test_an_upgraded_plugin_shows_its_new_commands_at_once(tmp_path, site):
    """Same entry point, same module name: only the distribution's version tells."""
    import shutil

    def release(version, command):
        source = COMMAND_PLUGIN.format(marker=str(tmp_path / version), command=command)
        return make_distribution(
            site, "toolang-tools-weather", version,
            entry_points={"toolang": {"tools-weather": "tl_weather"}},
            modules={"tl_weather": source},
        )  # fmt: skip

    old = release("1.0", "weather")
    assert "weather" in help_of(tmp_path, site)
    shutil.rmtree(old)
    release("2.0", "forecast")
    upgraded = help_of(tmp_path, site)
    assert re.search(r"\n  forecast +Tell the weather, from a plugin\.\n", upgraded)
    assert not re.search(r"\n  weather +", upgraded)
