"""docs/a2a.md's two-runtime walkthrough with this plugin's test kit: its files (the
blocks marked ``file=…``) and its foreground commands, with the echo model, the
plugins this distribution's tests install, and a free port. (The walkthrough as written,
on the normal install and in a shell, is tests/integration/test_a2a_walkthrough.py.)"""

from __future__ import annotations

import re
from pathlib import Path

from a2a_kit import Runtime, install_kit

DOC = Path(__file__).resolve().parents[3] / "docs" / "a2a.md"


def walkthrough() -> tuple[dict[str, str], list[tuple[str, list[str]]]]:
    text = DOC.read_text(encoding="utf-8").split("## Walkthrough", 1)[1].split("\n## ", 1)[0]
    files = {
        path: body for _, path, body in re.findall(r"```(\w+) file=(\S+)\n(.*?)```", text, re.S)
    }
    shell = re.findall(r"```sh\n(.*?)```", text, re.S)[0]
    commands = []
    for line in shell.splitlines():
        found = re.match(r"\(cd (a|b) && toolang (.*?)\)\s*(&|#|$)", line.strip())
        if found and found.group(3) != "&":
            words = re.findall(r'"[^"]*"|\S+', found.group(2))
            commands.append((found.group(1), [w.strip('"') for w in words]))
    return files, commands


def test_the_walkthrough_runs_as_written(tmp_path: Path):
    files, commands = walkthrough()
    assert [c[1][0] for c in commands] == ["a2a", "agents", "invoke", "turns", "agents"]
    install_kit(tmp_path / "site")
    secrets = {"A2A_TOKEN_FOR_A": "s3cret", "A2A_TOKEN_FOR_B": "s3cret"}
    b = Runtime(
        tmp_path / "b",
        tmp_path / "site",
        files["b/toolang.toml"].replace("127.0.0.1:8765", "127.0.0.1:{port}"),
        plugins="source-a2a,agents-user,echo-model,source-chat",
        env=secrets,
    )
    agent_md = tmp_path / "b" / "agents" / "critic" / "AGENT.md"
    agent_md.parent.mkdir(parents=True)
    agent_md.write_text(files["b/agents/critic/AGENT.md"], encoding="utf-8")
    a = Runtime(
        tmp_path / "a",
        tmp_path / "site",
        files["a/toolang.toml"].replace("127.0.0.1:8765", f"127.0.0.1:{b.port}"),
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
    assert "card critic: served at" in out["a2a check"]
    assert re.search(r"^critic\s+remote\s+active\s+ok\s", out["agents list"], re.M)
    assert out["invoke --agent"].strip() == "echo: check this plan"
    assert "runtime-a" in out["turns list"] or "a2a:" in out["turns list"]
    assert "1 completed" in out["agents show"]
    assert b.received() == ["check this plan"]
