"""The previous release's scaffolded plugins still work against the current core.

``tests/frozen_plugins/0.1/`` holds one plugin per family exactly as toolang 0.1's
``toolang plugin new`` wrote it (see its README). Each is built and installed as a real
distribution (pip, ``--no-deps``: their 0.1 pin refuses 0.2 on purpose) into a directory
of its own, its source package removed from the copy, and its own tests run against the
toolang-core of this checkout. A contract change that breaks them fails here (issue
#31, item 15); where 0.1's way still works only through a deprecation, the run shows
the :class:`DeprecationWarning`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

FROZEN = Path(__file__).resolve().parent / "frozen_plugins"
SERIES = sorted(p.name for p in FROZEN.iterdir() if p.is_dir())
PLUGINS = [(series, p.name) for series in SERIES for p in sorted((FROZEN / series).iterdir())]


def run(*args: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(("series", "plugin"), PLUGINS, ids=[f"{s}/{p}" for s, p in PLUGINS])
def test_a_frozen_plugin_passes_its_own_tests_against_the_current_core(tmp_path, series, plugin):
    source = FROZEN / series / plugin
    copy = tmp_path / plugin
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", ".tox"))
    site = tmp_path / "site"
    installed = run(
        sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
        "--target", site, copy,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    meta = tomllib.loads((copy / "pyproject.toml").read_text())["project"]
    package = meta["name"].replace("-", "_")
    shutil.rmtree(copy / package)  # the tests import the installed distribution
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLANG_", "PYTHONPATH"))}
    env["PYTHONPATH"] = str(site)
    outcome = run(
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W",
        "default::DeprecationWarning", copy / "tests",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    assert " passed" in outcome.stdout and " failed" not in outcome.stdout
    assert (
        str(site)
        in run(sys.executable, "-c", f"import {package}; print({package}.__file__)", env=env).stdout
    )
    if plugin.startswith("toolang-hook-"):  # 0.1's hook test: two deprecated ways, warned
        assert "ToolCallContext(...) without runtime= is deprecated" in outcome.stdout
        assert "Hooks.filter_tool_call is deprecated" in outcome.stdout
