"""A runtime SIGKILLed during an MCP call: its stdio server dies with it, and on the next
start the call is in doubt — the model is told, the call is not sent again. Real
`toolang run` processes, a real MCP server, real signals (Linux)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tools_mcp_kit import alive, server_pid, stdio_server, wait_for

from toolang_core.testing import make_distribution

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG, /proc")

CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.05
shutdown_grace_seconds = 0
lease_seconds = 3

[models]
default = "scripted"
"""


class Home:
    def __init__(self, path: Path, site: Path, ledger: Path) -> None:
        self.path = path
        path.mkdir()
        config = (
            CONFIG
            + "\n[plugins.tools-mcp]\n"
            + stdio_server("notes", "files_server.py", str(ledger))
        )
        (path / "toolang.toml").write_text(config)
        script = [{"tool_calls": [{"id": "c1", "name": "notes_hold", "params": {}}]}]
        (path / "script.json").write_text(json.dumps([*script, {"text": "done"}]))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
        self.env.update(
            TOOLANG_LOAD_PLUGINS="scripted,tools-mcp",
            TOOLANG_SCRIPT=str(path / "script.json"),
            PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        )
        self.proc: subprocess.Popen[str] | None = None

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "toolang_core", *args],
            cwd=self.path,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def json(self, *args: str) -> dict:
        done = self.cli(*args, "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "toolang_core", "run", "--no-sources"],
            cwd=self.path,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.communicate(timeout=120)


@pytest.fixture
def home(tmp_path):
    site = tmp_path / "site"
    make_distribution(
        site,
        "toolang-test-scripted",
        entry_points={"toolang": {"scripted": "toolang_core.testing.script_file_plugin"}},
    )
    made = Home(tmp_path / "home", site, tmp_path / "ledger")
    yield made
    if made.proc is not None and made.proc.poll() is None:
        made.proc.kill()
        made.proc.wait(timeout=30)
    pid_file = tmp_path / "server.pid"
    if pid_file.exists():
        with contextlib.suppress(AssertionError):  # none left: what the test wants
            os.kill(server_pid(pid_file), signal.SIGKILL)


def test_a_sigkilled_runtime_leaves_no_server_and_the_call_is_in_doubt(home, tmp_path):
    ledger, pid_file = tmp_path / "ledger", tmp_path / "server.pid"
    home.start()
    submitted = home.cli("submit", "hold", "--thread", "chat:k")
    assert submitted.returncode == 0, submitted.stderr
    turn_id = str(json.loads(submitted.stdout)["id"])
    wait_for("the server to hold the call", lambda: pid_file.exists() and pid_file.read_text())
    server = server_pid(pid_file)  # its id here, not in its sandbox

    assert home.proc is not None
    home.proc.send_signal(signal.SIGKILL)
    home.proc.wait(timeout=60)
    wait_for("the server to die with its runtime", lambda: not alive(server))

    home.start()
    wait_for(
        "the turn to end",
        lambda: (
            home.json("turns", "show", turn_id)["turn"]["status"]
            in ("completed", "failed", "canceled")
        ),
    )
    shown = home.json("turns", "show", turn_id)
    assert shown["turn"]["status"] == "completed"
    (step,) = [s for s in shown["steps"] if s["kind"] == "tool_call"]
    assert step["data"]["in_doubt"]["decision"] == "told_model"
    assert "may already have run" in step["data"]["result"]["error"]
    assert ledger.read_text() == "held\n"  # sent once, never again
    home.stop()
