"""A toolang home served by a real `toolang run`, whose scripted model calls the
operator's tools: what the process-level tests of this plugin share."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from toolang_core.testing import make_distribution

CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.05
shutdown_grace_seconds = 0
lease_seconds = 3

[models]
default = "scripted"

[plugins.tools-operator]
workspace = "workspace"
"""

UNSANDBOXED = (
    CONFIG
    + """
[tools]
sandbox = "off"
"""
)
"""For tests of how an unsandboxed command's process group is stopped and found again
(``echo $$`` is a host pid, the group is the runtime's to kill): the sandboxed case is
tests/test_sandbox_process.py's and tests/integration/test_sandbox_e2e.py's."""


def exec_step(command: str, call_id: str = "c1") -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "exec_run", "params": {"command": command}}]}


def wait_for(what: str, predicate: Callable[[], Any], timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := predicate()):
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.02)
    return found


def live_members(pgid: int) -> list[int]:
    """The processes of group ``pgid`` that still run (zombies left out: reaping an
    orphan is its new parent's business, not the runtime's)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


class ServedHome:
    """``path`` holds toolang.toml; ``start()`` runs `toolang run` on it."""

    def __init__(
        self, path: Path, site: Path, script: list[dict[str, Any]], config: str = CONFIG
    ) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        (path / "toolang.toml").write_text(config)
        self.script = path / "script.json"
        self.script.write_text(json.dumps(script))
        self.workspace = path / "workspace"
        self.env = {
            "TOOLANG_LOAD_PLUGINS": "scripted,tools-operator",
            "TOOLANG_SCRIPT": str(self.script),
            "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        }
        self.proc: subprocess.Popen[str] | None = None

    def full_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
        env.update(self.env, **(extra or {}))
        return env

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "toolang_core", *args],
            cwd=self.path,
            env=self.full_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def json(self, *args: str) -> Any:
        result = self.cli(*args, "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def start(self, extra_env: Mapping[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "toolang_core", "run", "--no-sources"],
            cwd=self.path,
            env=self.full_env(extra_env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

        def running() -> bool:
            assert self.proc is not None and self.proc.poll() is None, self.proc.communicate()
            status = self.cli("status", "--json")
            return status.returncode == 0 and bool(json.loads(status.stdout)["runtime_running"])

        wait_for("the runtime to start", running)

    def submit(self, text: str, *flags: str) -> str:
        result = self.cli("submit", text, *flags)
        assert result.returncode == 0, result.stderr
        return str(json.loads(result.stdout)["id"])

    def status_of(self, turn_id: str) -> str:
        return str(self.json("turns", "show", turn_id)["turn"]["status"])

    def shown(self, turn_id: str) -> dict[str, Any]:
        shown: dict[str, Any] = self.json("turns", "show", turn_id)
        return shown

    def wait_until_ended(self, turn_id: str) -> dict[str, Any]:
        wait_for(
            f"turn {turn_id} to end",
            lambda: self.status_of(turn_id) in ("completed", "failed", "canceled"),
        )
        return self.shown(turn_id)

    def stop(self) -> str:
        """SIGTERM the runtime; its stderr (it must exit cleanly)."""
        if self.proc is None:
            return ""
        self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, err
        assert "Traceback" not in err, err
        return err


def install_scripted_model(site: Path) -> None:
    make_distribution(
        site,
        "toolang-test-scripted",
        entry_points={"toolang": {"scripted": "toolang_core.testing.script_file_plugin"}},
    )
