"""tools/wheelhouse.py: every distribution built, pins checked, installable from outside.

One build for the session (conftest's ``wheelhouse``, about half a minute): a wheel and
an sdist per project, then a fresh virtual environment — outside the repository, as an
outside author has it — installs a core and a plugin from the wheelhouse and runs them,
and a scaffolded plugin that requires toolang-core installs against the wheelhouse.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def projects() -> list[Path]:
    return [ROOT, *sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml"))]


def run(*args: str | Path, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, timeout=600, check=False, **kw
    )


def test_every_project_has_a_wheel_and_an_sdist(wheelhouse):
    for project in projects():
        meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
        stem = f"{meta['name'].replace('-', '_')}-{meta['version']}"
        assert (wheelhouse / f"{stem}-py3-none-any.whl").is_file(), stem
        assert (wheelhouse / f"{stem}.tar.gz").is_file(), stem


def test_a_pin_that_excludes_the_built_core_is_refused(wheelhouse, tmp_path):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import wheelhouse as tool
    finally:
        sys.path.pop(0)
    assert tool.check_pins(wheelhouse) == []
    core = next(wheelhouse.glob("toolang_core-*.whl"))
    (tmp_path / core.name).write_bytes(core.read_bytes())
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
        '[project]\nname = "toolang-tools-future"\nversion = "1.0"\n'
        'dependencies = ["toolang-core>=9"]\n'
        "[tool.hatch.build.targets.wheel]\npackages = ['pkg']\n"
    )
    (plugin / "pkg").mkdir()
    (plugin / "pkg" / "__init__.py").write_text("")
    built = run(sys.executable, "-m", "build", "--wheel", "--no-isolation", "-o", tmp_path, plugin)
    assert built.returncode == 0, built.stderr
    (problem,) = tool.check_pins(tmp_path)
    assert "toolang-tools-future requires 'toolang-core>=9'" in problem
    assert "excludes the toolang-core" in problem


def test_an_outside_venv_installs_core_plugins_and_a_scaffold_from_the_wheelhouse(
    wheelhouse, tmp_path
):
    env_dir = tmp_path / "outside-venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    install = run(
        python, "-m", "pip", "install", "-q", "--find-links", wheelhouse,
        "toolang-core", "toolang-model-demo", "toolang-authoring", "hatchling",
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    listed = run(env_dir / "bin" / "toolang", "plugins", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert (rows["model-demo"]["version"], rows["model-demo"]["status"]) == (core, "loaded")

    # A plugin scaffolded by toolang-authoring's `toolang plugin new`: its requirement on
    # toolang-core resolves against the wheelhouse.
    scaffold = run(
        env_dir / "bin" / "toolang", "plugin", "new", "weather", "--dir", "src", cwd=tmp_path
    )
    assert scaffold.returncode == 0, scaffold.stderr
    plugin = tmp_path / "src" / "toolang-tools-weather"
    wheel = run(
        python, "-m", "pip", "install", "-q", "--no-build-isolation", "--find-links", wheelhouse,
        plugin,
    )  # fmt: skip
    assert wheel.returncode == 0, wheel.stdout + wheel.stderr
    listed = run(env_dir / "bin" / "toolang", "plugins", cwd=tmp_path)
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["tools-weather"]["status"] == "loaded"
