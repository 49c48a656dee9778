"""docs/typed-answers.md stays true: its walkthrough runs as written in a fresh
directory (real `toolang` processes, the demo model) and prints what the page shows;
its Python example runs a typed turn."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "typed-answers.md"


def block(name: str) -> str:
    found = re.search(rf"<!-- typed-answers:{name} -->\s*```\w+\n(.*?)```", PAGE.read_text(), re.S)
    assert found, f"docs/typed-answers.md has no typed-answers:{name} block"
    return found.group(1)


@pytest.mark.slow  # four real toolang processes
def test_the_walkthrough_runs_as_written_and_prints_what_the_page_shows(tmp_path):
    bin_dir = Path(sys.executable).parent
    env = {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path)}
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", "-e", "-c", block("walkthrough")],
        cwd=tmp_path,
        env={**env, "LANG": "C.UTF-8"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    shown = [line for line in result.stdout.splitlines() if line.startswith(("{", "exit"))]
    expected = block("output").splitlines()
    assert len(shown) == len(expected), result.stdout
    for got, want in zip(shown, expected, strict=True):
        pattern = re.escape(want).replace("…", "[0-9a-z]{26}")
        assert re.fullmatch(pattern, got), f"\n got: {got}\nwant: {want}"


def test_the_python_example_runs_a_typed_turn(tmp_path):
    source = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    (example,) = source
    space: dict[str, object] = {"__name__": "docs_example"}
    exec(compile(example, str(PAGE), "exec"), space)
    turn = space["typed_turn"](tmp_path)  # type: ignore[operator]
    assert (turn.status.value, turn.output) == ("completed", '{"n": 3}')
