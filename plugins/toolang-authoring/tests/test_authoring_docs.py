"""docs/testing.md's examples are the tests of plugins `toolang plugin new` writes: the
page and the scaffold stay in step (the page's tox.ini is the scaffold's, byte for byte)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from toolang_authoring.scaffold import scaffold_plugin

DOCS = Path(__file__).resolve().parents[3] / "docs"
"""The repository's docs/ (this plugin's tests run from a toolang checkout)."""


def file_blocks(page: Path) -> list[tuple[str, str, str]]:
    """Blocks that name a file (```python file=tests/test_x.py): (language, path, text)."""
    return re.findall(r"```(\w+) file=(\S+)\n(.*?)```", page.read_text(), re.S)


def test_testing_md_examples_pass_as_the_tests_of_scaffolded_plugins(tmp_path):
    """docs/testing.md's examples are the tests of `toolang plugin new weather` and
    `… notes --family memory` (both --standalone): written into those plugins, run."""
    weather = scaffold_plugin(tmp_path, "tools", "weather", standalone=True)
    notes = scaffold_plugin(tmp_path, "memory", "notes", standalone=True)
    blocks = file_blocks(DOCS / "testing.md")
    for language, relative, text in blocks:
        if language == "ini":  # shown as the scaffold writes it: it must be the same
            assert text == (weather / relative).read_text(), f"docs/testing.md: {relative}"
            continue
        assert relative.startswith("tests/test_"), relative
        (weather / relative).write_text(text)
    files = [str(weather / relative) for language, relative, _ in blocks if language == "python"]
    assert len(files) == 6 and any(language == "ini" for language, _, _ in blocks)
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            *files,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=weather,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(weather), str(notes)])},
    )
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
    passed = re.search(r"(\d+) passed", ran.stdout)
    assert passed and int(passed.group(1)) > 80, ran.stdout  # the conformance suite too
