"""Several one-shot `toolang chat` processes started together, with no `toolang run`:
each answers (the one-shots take turns serving the store) and nothing stays queued."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from toolang_core.testing.cli import run_toolang

CONFIG = """
[runtime]
poll_seconds = 0.05

[models]
default = "demo"
"""


def test_five_parallel_one_shot_chats_all_answer(tmp_path: Path) -> None:
    (tmp_path / "toolang.toml").write_text(CONFIG)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    chats = [
        subprocess.Popen(
            [sys.executable, "-m", "toolang_core", "chat", f"message {n}", "--thread", f"p{n}"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(5)
    ]
    outcomes = [chat.communicate(timeout=60) for chat in chats]
    for n, (chat, (out, err)) in enumerate(zip(chats, outcomes, strict=True)):
        assert chat.returncode == 0, err
        assert f"message {n}" in out, out
    listed = run_toolang("turns", "list", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    turns = json.loads(listed.stdout)
    assert len(turns) == 5
    assert {turn["status"] for turn in turns} == {"completed"}
