"""The README's tour, run as written in a fresh shell after command 1.

Command 1 makes `.venv` in the checkout, installs toolang and every plugin into it and
runs `toolang init --exist-ok`. Here `.venv` is the environment running this test (it
holds the same distributions), linked into a fresh directory; `init` runs from it as
command 1 does; then the tour's block runs in a new `bash` whose PATH does not know
toolang — its first line must put it there — with no `toolang run` serving the store.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def tour_block() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- tour:[^>]*-->\s*```sh\n(.*?)```", readme, re.S)
    assert match, "README.md has no <!-- tour: … --> block"
    return match.group(1)


def test_the_tour_block_starts_by_putting_the_venv_on_path():
    first = tour_block().splitlines()[0]
    assert first.split("#")[0].strip() == "source .venv/bin/activate"


def test_the_readme_tour_runs_as_written_in_a_fresh_shell(tmp_path: Path) -> None:
    venv = Path(sys.prefix)
    assert (venv / "bin" / "activate").exists(), "tests must run in a venv (as command 1 makes)"
    (tmp_path / ".venv").symlink_to(venv)
    init = subprocess.run(
        [str(tmp_path / ".venv" / "bin" / "toolang"), "init", "--exist-ok"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert init.returncode == 0, init.stderr
    lines = [line for line in tour_block().splitlines() if line.strip()]
    # One script, stopping at the first command that fails and saying which it was.
    script = "\n".join(["set -e", *(f"echo '>>> {i}'\n{line}" for i, line in enumerate(lines))])
    fresh = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", script],
        cwd=tmp_path,
        env=fresh,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    reached = re.findall(r">>> (\d+)", result.stdout)
    last = int(reached[-1]) if reached else 0
    assert result.returncode == 0, (
        f"tour line {last + 1} failed: {lines[last]!r}\n{result.stdout[-2000:]}\n"
        f"{result.stderr[-3000:]}"
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert "hello" in result.stdout
    assert (tmp_path / "plugins" / "toolang-tools-mytool").is_dir()
