"""A one-shot `toolang chat` (the starter configuration, every installed plugin) imports
what its turn uses and not what only a serving runtime, `toolang eval` or a URL
attachment needs: a one-shot pays for every module it imports, each time.

Checked in terms of modules imported (the process's ``sys.modules`` at exit), never in
time; bench/startup.py prints the times."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolang_core.testing.cli import run_toolang

NOT_FOR_A_ONE_SHOT = (
    "starlette",  # toolang-source-mcp's endpoint: built only by a run serving HTTP
    "toolang_source_mcp.routes",
    "mcp",  # the MCP SDK
    "urllib.request",  # toolang-source-chat fetches a URL attachment with it
    "toolang_core.evals.types",  # `toolang eval`'s, through the built-in evaluators
    "toolang_core.evals.builtin",
    "toolang_tools_mcp.lifecycle",  # toolang-tools-mcp with no server configured
    "toolang_tools_mcp.sessions",
    "toolang_core.doctor",  # `toolang doctor`'s (tools-mcp's lifecycle imported it)
    "toolang_teams.coordinator",  # toolang-teams with no team stored
    "toolang_core.sandbox.pool",  # bubblewraps waiting: only once a tool ran a program
)
ONLY_FOR_A_PROGRAM = "ctypes"
"""Loaded by toolang for a program's death signal only; checked only where no other
library loads it first (structlog's console renderer imports colorama where it is
installed, and colorama imports ctypes)."""

PROBE = """
import atexit, sys
def dump():
    with open({out!r}, "w") as f:
        f.write("\\n".join(sorted(sys.modules)))
atexit.register(dump)
from toolang_core.cli.main import main
sys.argv = ["toolang", *{args!r}]
main()
"""


def imported_by_toolang(home: Path, *args: str) -> set[str]:
    out = home / "modules.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLANG_", "LLM_"))}
    env["HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(out=str(out), args=list(args))],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return set(out.read_text().split())


def test_a_one_shot_chat_imports_only_what_its_turn_uses(tmp_path: Path) -> None:
    pytest.importorskip("toolang_source_chat")
    pytest.importorskip("toolang_tools_operator")
    assert run_toolang("init", cwd=tmp_path).returncode == 0
    (tmp_path / "workspace").mkdir(exist_ok=True)
    (tmp_path / "workspace" / "notes.txt").write_text("hello\n")

    plain = imported_by_toolang(tmp_path, "chat", "hi")
    assert "toolang_core.turn.agent" in plain  # the turn ran here, in this process
    tool = imported_by_toolang(
        tmp_path, "chat", "--agent", "operator", '/tool fs_read {"path": "notes.txt"}'
    )
    assert "toolang_tools_operator.tools" in tool
    for modules in (plain, tool):
        assert not [m for m in modules if _under(m, NOT_FOR_A_ONE_SHOT)]
        if "colorama" not in modules:
            assert ONLY_FOR_A_PROGRAM not in modules


def _under(module: str, names: tuple[str, ...]) -> bool:
    return any(module == name or module.startswith(name + ".") for name in names)
