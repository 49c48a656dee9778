"""Waiting on what another process does, and killing it at the worst moment: for tests
that run a real ``toolang`` (or a real server) in a subprocess."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

KILL_AND_RESUME_CONFIG: Final = """
[runtime]
executor = "agent"
lease_seconds = 5.0
poll_seconds = 0.05
shutdown_grace_seconds = 0.2

[models]
default = "scripted"
"""
"""A ``toolang.toml`` for a runtime a test kills mid-turn and starts again: agent turns
with the scripted model, a 5 s lease (a dead runtime's turns come back soon), a 50 ms
poll and a short shutdown grace."""


def wait_for(predicate: Callable[[], Any], timeout: float = 60, what: str = "the condition") -> Any:
    """Poll ``predicate`` every 20 ms until it returns something true, and return that.

    :raises AssertionError: after ``timeout`` seconds, naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def kill_when(
    process: subprocess.Popen[Any],
    predicate: Callable[[], Any],
    timeout: float = 60,
    what: str = "the condition",
) -> None:
    """SIGKILL ``process`` as soon as ``predicate`` holds (a crash at that point) and reap
    it; it is killed and reaped even when the wait fails.

    :raises AssertionError: when ``predicate`` did not hold within ``timeout`` seconds."""
    try:
        wait_for(predicate, timeout, what)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)


def start_toolang_run(
    home: Path, env: Mapping[str, str], log: Path, *args: str
) -> subprocess.Popen[str]:
    """Start ``python -m toolang_core run ARGS`` in ``home`` with ``env``; its log goes to
    the file ``log`` (a pipe nobody reads fills up at 64 KiB and blocks the runtime on
    its next log line)."""
    with log.open("w", encoding="utf-8") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "toolang_core", "run", *args],
            cwd=home,
            env=dict(env),
            stdout=subprocess.DEVNULL,
            stderr=out,
            text=True,
        )


def wait_serving(
    process: subprocess.Popen[Any],
    log: Path,
    ready: Callable[[], Any],
    timeout: float = 60,
    what: str = "toolang run",
) -> None:
    """Wait until ``ready()`` holds while ``process`` lives.

    :raises AssertionError: when it exits first (with its log), or after ``timeout``."""

    def up() -> Any:
        if process.poll() is not None:
            raise AssertionError(f"{what} exited ({process.returncode}): {log.read_text()}")
        return ready()

    wait_for(up, timeout, what)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (for a server a test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
