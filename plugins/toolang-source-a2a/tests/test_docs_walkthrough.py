"""docs/a2a.md's two-runtime walkthrough, run as written: its two toolang.toml files
and its commands (with the test model and free ports)."""

from __future__ import annotations

import re
from pathlib import Path

from a2a_kit import Runtime, install_kit

DOC = Path(__file__).resolve().parents[3] / "docs" / "a2a.md"


def walkthrough() -> tuple[str, str, list[tuple[str, list[str]]]]:
    text = DOC.read_text(encoding="utf-8").split("## Walkthrough", 1)[1]
    b_config, a_config = re.findall(r"```toml\n(.*?)```", text, re.S)[:2]
    shell = re.findall(r"```sh\n(.*?)```", text, re.S)[0]
    commands = []
    for line in shell.splitlines():
        found = re.match(r"\(cd (a|b) && toolang (.*?)\)\s*(&|#|$)", line.strip())
        if found and found.group(3) != "&":
            words = re.findall(r'"[^"]*"|\S+', found.group(2))
            commands.append((found.group(1), [w.strip('"') for w in words]))
    return b_config, a_config, commands


def test_the_walkthrough_runs_as_written(tmp_path: Path):
    b_config, a_config, commands = walkthrough()
    assert [c[1][0] for c in commands] == ["a2a", "agents", "invoke", "turns", "agents"]
    install_kit(tmp_path / "site")
    secrets = {"A2A_TOKEN_FOR_A": "s3cret", "A2A_TOKEN_FOR_B": "s3cret"}
    b = Runtime(
        tmp_path / "b",
        tmp_path / "site",
        b_config.replace("127.0.0.1:8765", "127.0.0.1:{port}"),
        env=secrets,
    )
    a = Runtime(
        tmp_path / "a",
        tmp_path / "site",
        a_config.replace("127.0.0.1:8765", f"127.0.0.1:{b.port}"),
        plugins="agents-remote,echo-model,source-chat,source-invoke",
        env=secrets,
    )
    b.start()
    try:
        out = {}
        for where, args in commands:
            result = (a if where == "a" else b).cli(*args)
            assert result.returncode == 0, (args, result.stdout, result.stderr)
            out[args[0] + " " + args[1]] = result.stdout
    finally:
        b.stop()
    assert '"name": "reviewer"' in out["a2a card"]
    assert "reviewer" in out["agents list"] and "remote" in out["agents list"]
    assert out["invoke --agent"].strip() == "echo: check this plan"
    assert "runtime-a" in out["turns list"] or "a2a:" in out["turns list"]
    assert "1 completed" in out["agents show"]
    assert b.received() == ["check this plan"]
