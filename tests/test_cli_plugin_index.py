"""`toolang plugins` answers from a cache keyed by what is installed, configured and
written: no plugin is imported while nothing changed, any change is seen at once, and a
plugin that fails is reported (and logged) every time."""

from __future__ import annotations

import json
import shutil

import pytest

from toolang_core.testing import make_distribution
from toolang_core.testing.cli import run_toolang

TOOL_PLUGIN = """
from pathlib import Path
Path({marker!r}).write_text("imported")

from toolang_core import Tool, hookimpl
{extra}

@hookimpl
def toolang_register_tools(register):
    register(Tool(name={tool!r}, description="A tool.", parameters={{"type": "object"}},
                  function=lambda **kw: kw))
"""


@pytest.fixture
def site(tmp_path):
    return tmp_path / "site"


def install(site, marker, name, *, version="1.0", tool=None, extra=""):
    source = TOOL_PLUGIN.format(marker=str(marker), tool=tool or f"{name}_tool", extra=extra)
    return make_distribution(
        site, f"toolang-tools-{name}", version,
        entry_points={"toolang": {f"tools-{name}": f"tl_{name}"}},
        modules={f"tl_{name}": source},
    )  # fmt: skip


def plugins_of(tmp_path, site, *args, **env):
    result = run_toolang(
        "plugins", *args, cwd=tmp_path, pythonpath=[site],
        env={"TOOLANG_CACHE_DIR": str(tmp_path / "cache"), **env},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return {row["name"]: row for row in json.loads(result.stdout)}, result


def test_a_second_listing_imports_no_plugin_and_prints_the_same(tmp_path, site):
    marker = tmp_path / "weather-imported"
    install(site, marker, "weather")
    first, first_run = plugins_of(tmp_path, site, "--all")
    assert first["tools-weather"]["provides"] == {"tools": ["weather_tool"]}
    assert marker.exists()
    marker.unlink()
    _, second_run = plugins_of(tmp_path, site, "--all")
    assert second_run.stdout == first_run.stdout
    assert not marker.exists()  # listed from the cache
    only_loaded, _ = plugins_of(tmp_path, site)  # the filters apply to the cached rows
    assert "tools-weather" in only_loaded
    assert all(row["status"] == "loaded" for row in only_loaded.values())
    hooked, _ = plugins_of(tmp_path, site, "--all", "--hook", "toolang_register_tools")
    assert "tools-weather" in hooked
    assert all("toolang_register_tools" in row["hooks"] for row in hooked.values())


def test_an_installed_distribution_is_listed_at_once(tmp_path, site):
    install(site, tmp_path / "a", "weather")
    assert "tools-tides" not in plugins_of(tmp_path, site)[0]
    install(site, tmp_path / "b", "tides")
    assert plugins_of(tmp_path, site)[0]["tools-tides"]["status"] == "loaded"


def test_a_removed_distribution_is_gone_at_once(tmp_path, site):
    install(site, tmp_path / "a", "weather")
    info = install(site, tmp_path / "b", "tides")
    assert "tools-tides" in plugins_of(tmp_path, site)[0]
    shutil.rmtree(info)
    (site / "tl_tides.py").unlink()
    assert "tools-tides" not in plugins_of(tmp_path, site)[0]


def test_an_upgraded_distribution_shows_its_new_version_and_tools_at_once(tmp_path, site):
    old = install(site, tmp_path / "a", "weather", version="1.0", tool="weather_now")
    assert plugins_of(tmp_path, site)[0]["tools-weather"]["version"] == "1.0"
    shutil.rmtree(old)
    install(site, tmp_path / "a", "weather", version="2.0", tool="weather_forecast")
    row = plugins_of(tmp_path, site)[0]["tools-weather"]
    assert (row["version"], row["provides"]) == ("2.0", {"tools": ["weather_forecast"]})


def test_a_plugin_edited_in_place_is_loaded_again(tmp_path, site):
    install(site, tmp_path / "a", "weather", tool="weather_now")
    assert plugins_of(tmp_path, site)[0]["tools-weather"]["provides"] == {"tools": ["weather_now"]}
    install(site, tmp_path / "a", "weather", tool="weather_later")  # same version
    assert plugins_of(tmp_path, site)[0]["tools-weather"]["provides"] == {
        "tools": ["weather_later"]
    }


def test_a_plugin_whose_dependency_was_removed_is_reported_failed_every_time(tmp_path, site):
    helper = make_distribution(
        site, "weather-helper", "1.0", modules={"weather_helper": "UNITS = 'metric'\n"}
    )
    install(site, tmp_path / "a", "weather", extra="import weather_helper")
    assert plugins_of(tmp_path, site)[0]["tools-weather"]["status"] == "loaded"
    shutil.rmtree(helper)
    (site / "weather_helper.py").unlink()
    for _ in range(2):
        rows, result = plugins_of(tmp_path, site, "--all")
        assert rows["tools-weather"]["status"] == "failed"
        assert "weather_helper" in rows["tools-weather"]["error"]["message"]
        assert "plugin.failed" in result.stderr  # logged each time, not only the first


def test_a_plugin_that_fails_to_import_is_never_served_from_the_cache(tmp_path, site):
    marker = tmp_path / "broken-imported"
    install(site, marker, "broken", extra="raise RuntimeError('broken on purpose')")
    for _ in range(2):
        rows, result = plugins_of(tmp_path, site, "--all")
        assert rows["tools-broken"]["status"] == "failed"
        assert "broken on purpose" in rows["tools-broken"]["error"]["message"]
        assert "plugin.failed" in result.stderr
        assert marker.exists()  # imported again: a failed load is not cached
        marker.unlink()
    strict = run_toolang(
        "--strict", "plugins", cwd=tmp_path, pythonpath=[site],
        env={"TOOLANG_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert strict.returncode == 3
    assert "broken on purpose" in strict.stderr


def test_a_configuration_change_is_seen_at_once_and_a_broken_one_still_fails(tmp_path, site):
    install(site, tmp_path / "a", "weather")
    assert plugins_of(tmp_path, site)[0]["tools-weather"]["status"] == "loaded"
    (tmp_path / "toolang.toml").write_text('[plugins]\ndisable = ["tools-weather"]\n')
    rows, _ = plugins_of(tmp_path, site, "--all")
    assert rows["tools-weather"]["status"] == "disabled"
    rows, _ = plugins_of(tmp_path, site, "--all", TOOLANG_DISABLE_PLUGINS="")  # same file
    assert rows["tools-weather"]["status"] == "disabled"
    # Valid while WEATHER_HOME is set, and listed (cached) then; the same bytes without
    # it are an invalid configuration, which the cache must not hide.
    (tmp_path / "toolang.toml").write_text('home = "${WEATHER_HOME}"\n')
    assert "tools-weather" in plugins_of(tmp_path, site, WEATHER_HOME=str(tmp_path))[0]
    broken = run_toolang(
        "plugins", cwd=tmp_path, pythonpath=[site],
        env={"TOOLANG_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert broken.returncode != 0
    assert "WEATHER_HOME is not set" in broken.stderr


def test_a_cache_that_cannot_be_written_only_costs_time(tmp_path, site):
    install(site, tmp_path / "a", "weather")
    (tmp_path / "not-a-directory").write_text("")
    cache = str(tmp_path / "not-a-directory" / "cache")
    for _ in range(2):
        assert "tools-weather" in plugins_of(tmp_path, site, TOOLANG_CACHE_DIR=cache)[0]
