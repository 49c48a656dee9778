"""Rules that keep every plugin's tests runnable together in one pytest session.

The integration env collects ``tests/`` and every ``plugins/*/tests/`` at once, with
pytest's default import mode: two test modules with the same basename, or a test that
imports from ``conftest``, break that session even when each suite passes alone.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_modules_in_test_directories_have_unique_basenames():
    by_name: dict[str, list[str]] = defaultdict(list)
    dirs = [ROOT / "tests", *sorted(ROOT.glob("plugins/*/tests"))]
    for directory in dirs:
        for path in directory.rglob("*.py"):
            if path.name not in ("conftest.py", "__init__.py"):
                by_name[path.name].append(str(path.relative_to(ROOT)))
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert clashes == {}, f"rename these (e.g. prefix the plugin's name): {clashes}"


def test_no_test_imports_from_conftest():
    pattern = re.compile(r"^\s*(from conftest import|import conftest\b)", re.MULTILINE)
    offenders = [
        str(path.relative_to(ROOT))
        for directory in [ROOT / "tests", *ROOT.glob("plugins/*/tests")]
        for path in directory.rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], f"move shared helpers to a uniquely named module: {offenders}"


def test_every_suite_with_properties_turns_hypothesis_time_checks_off():
    """Hypothesis's deadline and "too slow" health check fail a property on a busy
    machine (a combined run is one): each test directory that uses hypothesis loads the
    suite's profile without them in its conftest.py, which each plugin's env runs alone."""
    missing = []
    for directory in [ROOT / "tests", *sorted(ROOT.glob("plugins/*/tests"))]:
        uses = any(
            re.search(r"^\s*(from|import) hypothesis\b", path.read_text(encoding="utf-8"), re.M)
            for path in directory.rglob("test_*.py")
        )
        conftest = directory / "conftest.py"
        text = conftest.read_text(encoding="utf-8") if conftest.exists() else ""
        loads = 'settings.load_profile("toolang")' in text and "deadline=None" in text
        if uses and not (loads and "HealthCheck.too_slow" in text):
            missing.append(str(directory.relative_to(ROOT)))
    assert missing == [], f"load the 'toolang' hypothesis profile in these conftest.py: {missing}"
