"""`toolang plugin new`: the generated plugin passes its own test and, installed, is listed."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from toolang_authoring.scaffold import FAMILIES, STANDALONE_FAMILIES
from toolang_authoring.scaffold.standalone import Series
from toolang_core.testing import make_distribution
from toolang_core.testing.cli import assert_no_traceback, run_toolang

FROZEN = Path(__file__).resolve().parents[3] / "tests" / "frozen_plugins"
"""Past releases' scaffolded plugins, one per family (the core's tests/test_frozen_plugins.py
runs their tests against the current core)."""


@pytest.fixture
def cli_run(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``cli_run(*args, env=…, pythonpath=…)`` runs the real ``toolang`` in ``tmp_path``."""

    def run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        kwargs.setdefault("cwd", tmp_path)
        return run_toolang(*args, **kwargs)  # type: ignore[arg-type]

    return run


def run_pytest(path, pythonpath):
    env_path = str(pythonpath)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": env_path, "HOME": str(pythonpath)},
    )


@pytest.mark.parametrize("family", FAMILIES)
def test_generated_plugin_passes_its_own_test(cli_run, tmp_path, family):
    result = cli_run("plugin", "new", "demo", "--family", family, "--dir", "plugins")
    assert result.returncode == 0, result.stderr
    root = tmp_path / "plugins" / f"toolang-{family}-demo"
    assert (root / "pyproject.toml").exists()
    pyproject = (root / "pyproject.toml").read_text()
    assert f'{family}-demo = "toolang_{family}_demo"' in pyproject
    outcome = run_pytest(root / "tests", root)
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    assert " passed" in outcome.stdout


def test_bad_names_and_existing_directories_are_refused(cli_run, tmp_path):
    bad = cli_run("plugin", "new", "Bad_Name")
    assert_no_traceback(bad)
    assert bad.returncode == 2
    assert "must be lowercase letters and digits" in bad.stderr
    assert cli_run("plugin", "new", "x").returncode == 0
    again = cli_run("plugin", "new", "x")
    assert again.returncode == 2
    assert "already exists" in again.stderr


def test_installed_generated_plugin_shows_up_in_toolang_plugins(cli_run, tmp_path):
    assert cli_run("plugin", "new", "greeter", "--dir", "plugins").returncode == 0
    root = tmp_path / "plugins" / "toolang-tools-greeter"
    target = tmp_path / "site"
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(root),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    result = cli_run("plugins", pythonpath=[target], env={"TOOLANG_LOAD_PLUGINS": "tools-greeter"})
    assert result.returncode == 0, result.stderr
    (row,) = json.loads(result.stdout)
    assert (row["name"], row["distribution"], row["version"], row["status"]) == (
        "tools-greeter",
        "toolang-tools-greeter",
        "0.1.0",
        "loaded",
    )
    assert row["provides"] == {"tools": ["greeter_hello"], "agent sources": ["tools-greeter"]}


@pytest.mark.parametrize("family", STANDALONE_FAMILIES)
def test_standalone_plugin_is_a_repository_of_its_own_that_passes_its_tests(
    cli_run, tmp_path, family
):
    result = cli_run("plugin", "new", "demo", "--family", family, "--standalone")
    assert result.returncode == 0, result.stderr
    root = tmp_path / f"toolang-{family}-demo"
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    series = Series.installed()
    assert pyproject["project"]["dependencies"] == [series.pin]
    assert pyproject["project"]["entry-points"]["toolang"] == {
        f"{family}-demo": f"toolang_{family}_demo"
    }
    tox = (root / "tox.ini").read_text()
    assert f"env_list = {series.factor}" in tox
    assert f"{series.factor}: {series.pin}" in tox
    assert "PIP_FIND_LINKS = {env:TOOLANG_FIND_LINKS:}" in tox
    workflow = (root / ".github" / "workflows" / "test.yml").read_text()
    assert "TOOLANG_FIND_LINKS: ${{ vars.TOOLANG_FIND_LINKS }}" in workflow
    assert "- run: tox" in workflow
    assert series.pin.removeprefix("toolang-core") in (root / "README.md").read_text()
    outcome = run_pytest(root / "tests", root)
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr


def test_standalone_next_steps_name_the_wheelhouse_the_author_set(cli_run, tmp_path):
    unset = cli_run("plugin", "new", "one", "--standalone", env={"TOOLANG_FIND_LINKS": ""})
    assert unset.returncode == 0, unset.stderr
    assert "--find-links WHEELHOUSE -e" in unset.stdout
    assert "WHEELHOUSE: a directory of toolang's wheels" in unset.stdout
    wheels = tmp_path / "my wheels"
    named = cli_run("plugin", "new", "two", "--standalone", env={"TOOLANG_FIND_LINKS": str(wheels)})
    assert named.returncode == 0, named.stderr
    assert f"--find-links '{wheels}' -e '.[test]'" in named.stdout
    assert f"TOOLANG_FIND_LINKS='{wheels}' tox" in named.stdout
    assert "WHEELHOUSE" not in named.stdout


@pytest.mark.parametrize(
    ("version", "pin", "factor"),
    [
        ("0.1.0", "toolang-core>=0.1,<0.2", "toolang01"),
        ("0.12.3.dev1", "toolang-core>=0.12,<0.13", "toolang012"),
        ("1.4.2", "toolang-core>=1.4,<2", "toolang14"),
    ],
)
def test_a_standalone_plugin_pins_the_release_series_it_was_made_with(version, pin, factor):
    series = Series.of(version)
    assert (series.pin, series.factor) == (pin, factor)


def test_a_standalone_store_is_refused_naming_the_families_that_work(cli_run):
    refused = cli_run("plugin", "new", "x", "--family", "store", "--standalone")
    assert refused.returncode == 2
    assert "--standalone does not support the 'store' family" in refused.stderr
    assert "toolang-store-postgres" in refused.stderr


def test_an_in_tree_plugin_pins_the_running_cores_series_too(cli_run, tmp_path):
    # It was written as toolang-core>=0.1,<0.2 whatever the core (issue #31, item 15).
    assert cli_run("plugin", "new", "pinned", "--dir", "plugins").returncode == 0
    root = tmp_path / "plugins" / "toolang-tools-pinned"
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    assert pyproject["project"]["dependencies"] == [Series.installed().pin]


def test_every_family_of_the_scaffold_is_frozen():
    for series in sorted(p for p in FROZEN.iterdir() if p.is_dir()):
        frozen = {plugin.name.split("-")[1] for plugin in series.iterdir() if plugin.is_dir()}
        assert frozen == set(FAMILIES), series.name


def test_the_scaffold_pins_the_series_this_repositorys_plugins_pin():
    own = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    (core,) = [d for d in own["project"]["dependencies"] if d.startswith("toolang-core")]
    assert Series.installed().pin == core


def test_plugin_new_works_while_another_plugin_is_broken(cli_run, tmp_path):
    site = tmp_path / "site"
    make_distribution(
        site,
        "toolang-test-broken",
        entry_points={"toolang": {"broken": "tl_broken"}},
        modules={"tl_broken": "import tl_does_not_exist\n"},
    )
    made = cli_run("plugin", "new", "sturdy", pythonpath=[site])
    assert_no_traceback(made)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "plugins" / "toolang-tools-sturdy" / "pyproject.toml").is_file()
    assert "toolang-test-broken" in made.stderr  # reported, and nothing else stopped
