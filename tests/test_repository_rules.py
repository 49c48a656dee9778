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
