"""docs/a2a.md's two-runtime walkthrough, run as written, on the normal install.

Its files (the blocks marked ``file=…``) are written into a fresh directory and its
shell block runs there in a new ``bash`` that finds ``toolang`` on PATH — the
environment running this test, which holds every plugin as the README's command 1
installs them (the HTTP server plugin too, not enabled). The only change: the port
8765 becomes a free one. Two real ``toolang run`` processes serve, B on that loopback
port; every foreground command must succeed and print what the doc's comment says.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from toolang_core.store.sqlite import SQLiteStore
from toolang_core.testing.processes import free_port

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "a2a.md"


def walkthrough() -> tuple[dict[str, str], list[str]]:
    """The walkthrough's files by path, and its shell block's lines."""
    text = DOC.read_text(encoding="utf-8").split("## Walkthrough", 1)[1].split("\n## ", 1)[0]
    files = {
        path: body for _, path, body in re.findall(r"```(\w+) file=(\S+)\n(.*?)```", text, re.S)
    }
    (shell,) = re.findall(r"```sh\n(.*?)```", text, re.S)
    return files, [line for line in shell.splitlines() if line.strip()]


def stop_group(leader: int) -> None:
    """SIGTERM the shell's process group (the two `toolang run`s it left in the
    background) and wait until it is empty; SIGKILL what is left after a minute."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(leader, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while True:
        try:
            os.killpg(leader, 0)
        except ProcessLookupError:
            return
        if time.monotonic() > deadline:
            os.killpg(leader, signal.SIGKILL)
            return
        time.sleep(0.05)


def outputs(stdout: str) -> dict[int, str]:
    """Each script line's output, by its index (the script echoes ``>>> i`` first)."""
    parts = re.split(r"^>>> (\d+)\n", stdout, flags=re.M)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_the_walkthrough_is_two_runtimes_three_files_and_its_commands():
    files, lines = walkthrough()
    assert sorted(files) == ["a/toolang.toml", "b/agents/critic/AGENT.md", "b/toolang.toml"]
    assert sum(line.rstrip().split("#")[0].rstrip().endswith("&") for line in lines) == 2


def test_the_a2a_walkthrough_runs_as_written(tmp_path: Path) -> None:
    files, lines = walkthrough()
    port = str(free_port())
    for path, body in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body.replace("8765", port), encoding="utf-8")
    lines = [line.replace("8765", port) for line in lines]
    script = "\n".join(["set -e", *(f"echo '>>> {i}'\n{line}" for i, line in enumerate(lines))])
    bin_dir = Path(sys.executable).parent
    env = {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
    }
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        shell = subprocess.Popen(
            ["bash", "--noprofile", "--norc", "-c", script],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,  # its own process group: the background runs with it
        )
    try:
        code = shell.wait(timeout=600)
    finally:
        stop_group(shell.pid)
    said, logged = out.read_text(encoding="utf-8"), err.read_text(encoding="utf-8")
    ran = outputs(said)
    last = max(ran, default=0)
    assert code == 0, f"walkthrough line {last + 1} failed: {lines[last]!r}\n{said}\n{logged}"
    assert len(ran) == len(lines)

    def output_of(command: str) -> str:
        (index,) = [i for i, line in enumerate(lines) if command in line]
        return ran[index]

    assert re.search(
        r"^ok\s+card critic: served at http://127\.0\.0\.1:\d+/a2a/critic/",
        output_of("a2a check"),
        re.M,
    )
    assert re.search(r"^critic\s+remote\s+active\s+ok\s", output_of("agents list"), re.M)
    assert "check this plan" in output_of("toolang invoke")
    assert re.search(r"completed\s+a2a:", output_of("turns list"))
    assert "1 completed" in output_of("agents show")
    for warning in ("agents.remote_shadowed", "a2a.not_served", "Traceback"):
        assert warning not in logged, logged

    # B answered A's request: its store has the chat turn, owned by A's caller (a2a:<name>)
    store = SQLiteStore(tmp_path / "b" / ".toolang" / "toolang.db")
    try:
        (turn,) = [t for t in store.list_turns() if t.input == "check this plan"]
    finally:
        store.close()
    assert (turn.owner, turn.status.value, turn.thread_id[:4]) == (
        "a2a:runtime-a",
        "completed",
        "a2a:",
    )
