"""The files that make a plugin a repository of its own (``toolang plugin new --standalone``).

An outside author has no toolang checkout: the plugin pins the toolang-core release
series it was made with, its tox.ini installs toolang-core from a wheelhouse named by
``TOOLANG_FIND_LINKS`` (toolang is on no package index yet), and its CI workflow runs
that tox. ``string.Template`` text; ``${pin}`` is the requirement
(``toolang-core>=0.2,<0.3``) and ``${series}`` the release series as a tox factor
(``toolang02``).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

import attrs

FIND_LINKS_VAR = "TOOLANG_FIND_LINKS"
"""The environment variable naming where toolang-core's wheels are (a directory or URL)."""


@attrs.frozen
class Series:
    """A toolang release series: the versions that keep one public contract (0.2.x)."""

    major: int
    minor: int

    @classmethod
    def of(cls, version_text: str) -> Series:
        """The series of a version such as ``0.1.0`` or ``1.2.3.dev1``."""
        major, minor = (int(part) for part in version_text.split(".")[:2])
        return cls(major, minor)

    @classmethod
    def installed(cls) -> Series:
        """The series of the toolang-core that runs this command."""
        try:
            return cls.of(version("toolang-core"))
        except PackageNotFoundError:  # run from a source tree that is not installed
            from toolang_core import __version__

            return cls.of(__version__)

    @property
    def pin(self) -> str:
        """While toolang is 0.x a minor release may change a public contract (see the
        changelog's version policy), so the pin admits one minor series; from 1.0 one
        major."""
        upper = f"{self.major}.{self.minor + 1}" if self.major == 0 else f"{self.major + 1}"
        return f"toolang-core>={self.major}.{self.minor},<{upper}"

    @property
    def factor(self) -> str:
        return f"toolang{self.major}{self.minor}"


PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.25"]
build-backend = "hatchling.build"

[project]
name = "${distribution}"
version = "0.1.0"
description = "A toolang ${family} plugin."
readme = "README.md"
requires-python = ">=3.11"
classifiers = ["Programming Language :: Python :: 3"]
# The toolang release series this plugin supports (a 0.x minor release may change
# the hook contract). Widen it once tox passes against the next series.
dependencies = ["${pin}"]

[project.optional-dependencies]
test = ["toolang-core[testing]", "pytest>=8.3"]

[project.entry-points.toolang]
${entry_point} = "${package}"

[tool.hatch.build.targets.wheel]
packages = ["${package}"]

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-ra"
"""

TOX = """\
# The plugin's tests in a fresh environment per supported toolang release series:
#
#     TOOLANG_FIND_LINKS=/path/to/toolang/dist/wheelhouse tox
#
# toolang-core is on no package index yet: TOOLANG_FIND_LINKS names a directory (or an
# URL) of its wheels — the wheelhouse `python tools/wheelhouse.py` builds in a toolang
# checkout. Everything else comes from your package index. To support another series,
# add its factor to env_list and a line to deps.
[tox]
requires = tox>=4
env_list = ${series}

[testenv]
description = the plugin's tests against toolang-core of the {env_name} series
extras = test
pass_env = ${find_links_var}
set_env =
    PIP_FIND_LINKS = {env:${find_links_var}:}
    UV_FIND_LINKS = {env:${find_links_var}:}
deps =
    ${series}: ${pin}
commands =
    pytest {posargs:-q}
"""

WORKFLOW = """\
# Runs tox on each push and pull request. toolang-core's wheels come from the URL or
# path in the repository variable TOOLANG_FIND_LINKS (Settings → Variables → Actions),
# e.g. a release page or an artifact store holding a toolang wheelhouse.
name: test

on:
  push:
  pull_request:

jobs:
  tox:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python: ["3.11", "3.12", "3.13"]
    env:
      ${find_links_var}: $${{ vars.${find_links_var} }}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: $${{ matrix.python }}
      - run: python -m pip install tox
      - run: tox
"""

README = """\
# ${distribution}

A toolang ${family} plugin, in a repository of its own. Its entry point is
`${entry_point}` in the group `toolang`; it supports toolang-core `${pin_spec}`.

## Try it

toolang-core is on no package index yet: point `--find-links` at a toolang wheelhouse
(a directory of wheels built by `python tools/wheelhouse.py` in a toolang checkout):

    python -m venv .venv
    .venv/bin/pip install --find-links /path/to/wheelhouse -e '.[test]'
    .venv/bin/toolang plugins            # lists ${entry_point}
    .venv/bin/toolang doctor

## Test

    .venv/bin/pytest                                        # this environment
    TOOLANG_FIND_LINKS=/path/to/wheelhouse tox              # fresh environments, per series

The tests use toolang's pytest fixtures (`toolang_runtime`, `toolang_scripted_model`,
the conformance suites); see toolang's docs/testing.md. `.github/workflows/test.yml`
runs tox in CI with the wheelhouse named by the repository variable
`TOOLANG_FIND_LINKS`.

## Ship

    .venv/bin/pip install build && .venv/bin/python -m build   # dist/*.whl and *.tar.gz

Users install the wheel into the environment toolang runs from.
"""

GITIGNORE = """\
.venv/
.tox/
dist/
__pycache__/
*.egg-info/
.toolang/
"""


def files() -> dict[str, str]:
    """The standalone repository's files besides the plugin module and its test."""
    return {
        "pyproject.toml": PYPROJECT,
        "README.md": README,
        "tox.ini": TOX,
        ".github/workflows/test.yml": WORKFLOW,
        ".gitignore": GITIGNORE,
    }


def values(series: Series) -> dict[str, str]:
    """The template fields a standalone repository adds to the plugin's names."""
    return {
        "pin": series.pin,
        "pin_spec": series.pin.removeprefix("toolang-core"),
        "series": series.factor,
        "find_links_var": FIND_LINKS_VAR,
    }
