#!/usr/bin/env python3
"""Build a wheelhouse: a wheel and an sdist of toolang-core and of every plugin.

    python3 tools/wheelhouse.py [--out dist/wheelhouse] [--isolated]

Each project (the repository root and each ``plugins/<dist>/`` with a pyproject.toml) is
built with pypa/build — by default without build isolation when its backend (hatchling)
is importable here, which needs no network and takes a second per project; ``--isolated``
builds each in a fresh environment as a release would. The built metadata is then checked:
every plugin of this repository carries the core's version (they share one), and every
plugin's requirement on toolang-core must admit the core version just built, so a
plugin installed from this wheelhouse never pulls another core.

An outside plugin installs against the result with
``pip install --find-links dist/wheelhouse toolang-core <plugins…>`` (see
docs/plugins.md). The script prints one line per file and exits non-zero, naming the
project, when a build or a pin check fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = "toolang-core"


def projects() -> list[Path]:
    """The repository root (toolang-core) first, then each plugin directory, sorted."""
    plugins = sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file())
    return [ROOT, *plugins]


def build(project: Path, out: Path, *, isolated: bool) -> None:
    command = [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out)]
    if not isolated:
        command.append("--no-isolation")
    result = subprocess.run(
        [*command, str(project)], capture_output=True, text=True, check=False, timeout=600
    )
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise SystemExit(f"error: building {project.relative_to(ROOT) or '.'} failed:\n{tail}")


def wheel_metadata(wheel: Path) -> tuple[str, str, list[str]]:
    """(name, version, Requires-Dist lines) read from a built wheel's METADATA."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        message = Parser().parsestr(archive.read(name).decode())
    return message["Name"], message["Version"], message.get_all("Requires-Dist") or []


def check_versions(out: Path) -> list[str]:
    """Problems: a distribution of this repository whose version is not the core's —
    toolang-core and its plugins share one version (CHANGELOG.md, "Versions")."""
    ours = {path.parent.name if path != ROOT else CORE for path in projects()}
    problems = []
    core_version = None
    for wheel in sorted(out.glob("*.whl")):
        name, version, _ = wheel_metadata(wheel)
        if name == CORE:
            core_version = version
    for wheel in sorted(out.glob("*.whl")):
        name, version, _ = wheel_metadata(wheel)
        if name in ours and core_version is not None and version != core_version:
            problems.append(
                f"{name} {version}: the plugins of this repository share the core's version, "
                f"{core_version} (set it in plugins/{name}/pyproject.toml)"
            )
    return problems


def check_pins(out: Path) -> list[str]:
    """Problems: a plugin whose toolang-core requirement excludes the built core."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    wheels = {wheel_metadata(w)[0]: wheel_metadata(w) for w in sorted(out.glob("*.whl"))}
    core = wheels.get(CORE)
    if core is None:
        return [f"no {CORE} wheel in {out}"]
    problems = []
    for name, (_, _version, requires) in sorted(wheels.items()):
        for line in requires:
            requirement = Requirement(line)
            if canonicalize_name(requirement.name) != CORE or requirement.marker is not None:
                continue
            if not requirement.specifier.contains(core[1], prereleases=True):
                problems.append(
                    f"{name} requires {line!r}, which excludes the {CORE} {core[1]} just built"
                )
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist" / "wheelhouse")
    parser.add_argument("--isolated", action="store_true", help="build in fresh environments")
    args = parser.parse_args()
    if importlib.util.find_spec("build") is None:
        raise SystemExit(
            f"error: pypa/build is not installed: {sys.executable} -m pip install build"
        )
    isolated = args.isolated or importlib.util.find_spec("hatchling") is None
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for project in projects():
        pyproject = tomllib.loads((project / "pyproject.toml").read_text())
        build(project, out, isolated=isolated)
        print(f"built {pyproject['project']['name']} {pyproject['project']['version']}")
    problems = check_versions(out) + check_pins(out)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        raise SystemExit(1)
    files = sorted(p.name for p in out.iterdir() if p.suffix in {".whl", ".gz"})
    print(f"{len(files)} files in {out}")


if __name__ == "__main__":
    main()
