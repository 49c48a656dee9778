"""A tool scaffolded by `toolang plugin new` is usable by an agent out of the box:
scaffold it, install it (as a distribution, like a user's `pip install`), and a turn of
the agent it brings calls the tool; nothing warns about tools no agent owns."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from toolang_core.testing.cli import assert_no_traceback, run_toolang

CONFIG = """
[models]
default = "demo"
"""


def test_a_scaffolded_tool_is_called_through_a_turn_of_its_agent(tmp_path: Path) -> None:
    made = run_toolang("plugin", "new", "mytool", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "mytool owns the mytool_* tools" in made.stdout
    assert f"{sys.executable} -m pip install -e" in made.stdout
    site = tmp_path / "site"
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(tmp_path / "plugins" / "toolang-tools-mytool"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    (tmp_path / "toolang.toml").write_text(CONFIG)

    chat = run_toolang(
        "chat",
        "--agent",
        "mytool",
        '/tool mytool_hello {"name": "Ada"}',
        cwd=tmp_path,
        pythonpath=[site],
    )
    assert_no_traceback(chat)
    assert chat.returncode == 0, chat.stderr
    assert "Hello, Ada!" in chat.stdout
    assert "unmatched" not in chat.stderr

    owners = run_toolang("agents", "tools", cwd=tmp_path, pythonpath=[site])
    (row,) = [line.split() for line in owners.stdout.splitlines() if "mytool_hello" in line]
    assert row[:3] == ["mytool_hello", "mytool", "mytool_*"]
    doctor = run_toolang("doctor", cwd=tmp_path, pythonpath=[site])
    assert "mytool_hello" not in doctor.stdout, doctor.stdout
