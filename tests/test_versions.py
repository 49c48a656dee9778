"""One version for toolang-core and every plugin of this repository, and pins that
follow it (issue #31, item 15): a public contract change moves the version, and a plugin
pinned to the old series is told by pip rather than broken at run time."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

import toolang_core

ROOT = Path(__file__).resolve().parent.parent


def project(path: Path) -> dict:
    return tomllib.loads((path / "pyproject.toml").read_text(encoding="utf-8"))["project"]


CORE = project(ROOT)["version"]
MAJOR, MINOR = (int(part) for part in CORE.split(".")[:2])
UPPER = f"{MAJOR}.{MINOR + 1}" if MAJOR == 0 else f"{MAJOR + 1}"
SERIES_PIN = f"toolang-core>={MAJOR}.{MINOR},<{UPPER}"
"""The core's release series as a requirement: one minor series while 0.x, one major
from 1.0 (the changelog's policy; toolang-authoring's scaffold writes the same pin)."""
PLUGINS = sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file())


def test_the_code_says_the_version_the_distribution_says():
    assert toolang_core.__version__ == CORE


def test_every_plugin_carries_the_core_version():
    wrong = {p.name: project(p)["version"] for p in PLUGINS if project(p)["version"] != CORE}
    assert wrong == {}, f"toolang-core is {CORE}"


def is_plugin(path: Path) -> bool:
    """A toolang plugin (entry points in the ``toolang`` group), not a distribution that
    only talks to a runtime from outside (toolang-client: HTTP, no toolang-core)."""
    return "toolang" in project(path).get("entry-points", {})


def test_every_plugin_pins_the_core_release_series():
    for plugin in filter(is_plugin, PLUGINS):
        pins = [
            Requirement(line)
            for line in project(plugin)["dependencies"]
            if Requirement(line).name == "toolang-core"
        ]
        assert len(pins) == 1, plugin.name
        assert str(pins[0].specifier) == str(Requirement(SERIES_PIN).specifier), plugin.name
        assert pins[0].specifier.contains(CORE)
        assert not pins[0].specifier.contains(str(Version(f"{MAJOR}.{MINOR + 1}")))


def test_the_changelog_states_the_policy_and_has_the_version_and_an_unreleased_section():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert headings[0] == "Unreleased"
    major, minor = CORE.split(".")[:2]
    assert any(h.startswith(f"{major}.{minor}.") for h in headings), headings
    header = text.split("\n## ", 1)[0]
    for promise in ("public contract", "DeprecationWarning", "after 1.0", "frozen"):
        assert promise in header, promise


def test_a_distribution_that_is_no_plugin_does_not_depend_on_the_core():
    outside = [p for p in PLUGINS if not is_plugin(p)]
    assert [p.name for p in outside] == ["toolang-client"]
    for path in outside:
        names = [Requirement(line).name for line in project(path)["dependencies"]]
        assert "toolang-core" not in names, path.name
