"""`toolang run` on a terminal: log lines never land on its status line.

The runtime runs on a pseudo-terminal (its stderr is a tty, so it draws the status
line); turns submitted from another process make it log while the line is drawn.
"""

from __future__ import annotations

import io
import os
import re
import select
import signal
import sys
import time
from pathlib import Path

from toolang_core.cli.status_line import CLEAR, StatusLine
from toolang_core.testing.cli import run_toolang

CONFIG = '[runtime]\nexecutor = "echo"\npoll_seconds = 0.05\n\n[log]\nlevel = "info"\n'
ENV = {"TOOLANG_LOAD_PLUGINS": ""}


def test_a_log_line_takes_the_status_line_away_and_puts_it_back_after():
    out = io.StringIO()
    line = StatusLine(out)
    line.show("chat 1▶ 0⧗")
    print("turn.finished id=1", file=line, flush=True)  # how structlog's logger writes
    assert out.getvalue() == f"{CLEAR}chat 1▶ 0⧗{CLEAR}turn.finished id=1\nchat 1▶ 0⧗"
    line.clear()
    assert out.getvalue().endswith(CLEAR)


def read_for(fd: int, seconds: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_toolang_run_on_a_terminal_keeps_log_lines_off_its_status_line(tmp_path: Path):
    (tmp_path / "toolang.toml").write_text(CONFIG)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(ENV)
    pid, fd = os.forkpty()
    if pid == 0:
        try:
            os.chdir(tmp_path)
            os.execve(sys.executable, [sys.executable, "-m", "toolang_core", "run"], env)
        finally:
            os._exit(127)
    try:
        shown = read_for(fd, 0.1)
        deadline = time.monotonic() + 30
        while b"admitted" not in shown:  # the status line is up
            assert time.monotonic() < deadline, shown
            shown += read_for(fd, 0.2)
        for n in range(5):
            submitted = run_toolang("submit", f"m{n}", "--thread", f"t{n}", cwd=tmp_path, env=ENV)
            assert submitted.returncode == 0, submitted.stderr
            shown += read_for(fd, 0.3)
        while shown.count(b"turn.finished") < 5:
            assert time.monotonic() < deadline, shown
            shown += read_for(fd, 0.2)
        os.kill(pid, signal.SIGINT)
        shown += read_for(fd, 3)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    text = shown.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    # The status line ends "(admitted N)"; only a clear (or the end) may follow it.
    glued = re.findall(r"\(admitted \d+\)(?!\r\x1b\[2K|$)(.{0,40})", text)
    assert not glued, f"log output written onto the status line: {glued}"
    assert text.count("turn.finished") == 5
    assert "Ctrl-C stops the runtime. From another terminal in this directory: " in text
