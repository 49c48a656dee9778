"""A toolang home served by real `toolang run` processes, whose model follows a script,
and the commands a test runs against it (the approval tests' shared kit).

The model is the test kit's script-file model, offered by a made-up distribution on
PYTHONPATH (:func:`scripted_site`); the script is a JSON file named by
``TOOLANG_SCRIPT``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from toolang_core.testing import make_distribution
from toolang_core.testing.cli import run_toolang
from toolang_core.testing.processes import start_toolang_run, wait_serving


def scripted_site(site: Path) -> Path:
    """``site``, a directory holding the distribution that offers the ``scripted`` model."""
    make_distribution(
        site,
        "toolang-test-scripted",
        entry_points={"toolang": {"scripted": "toolang_core.testing.script_file_plugin"}},
    )
    return site


class ServedHome:
    """The home at ``path`` with ``config`` as its toolang.toml; the model follows
    ``script`` (written as JSON beside the home)."""

    def __init__(self, path: Path, site: Path, config: str, script: list[dict[str, Any]]) -> None:
        self.path = path
        self.site = site
        script_file = path.parent / "script.json"
        script_file.write_text(json.dumps(script))
        self.env = {"TOOLANG_SCRIPT": str(script_file)}
        self.runs: list[subprocess.Popen[str]] = []
        path.mkdir()
        (path / "toolang.toml").write_text(config)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_toolang(*args, cwd=self.path, env=self.env, pythonpath=[self.site])

    def json(self, *args: str) -> Any:
        result = self.cli(*args, "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def turn(self, turn_id: str) -> dict[str, Any]:
        shown: dict[str, Any] = self.json("turns", "show", turn_id)
        return shown

    def status_of(self, turn_id: str) -> str:
        return str(self.turn(turn_id)["turn"]["status"])

    def log(self, n: int) -> str:
        """What run ``n`` (0: the first :meth:`start`) logged."""
        return (self.path / f"run-{n}.log").read_text()

    def start(self) -> subprocess.Popen[str]:
        """`toolang run --no-sources` here, once it serves (its log: :meth:`log`)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
        env.update(
            self.env, PYTHONPATH=os.pathsep.join([str(self.site), env.get("PYTHONPATH", "")])
        )
        log = self.path / f"run-{len(self.runs)}.log"
        proc = start_toolang_run(self.path, env, log, "--no-sources")
        self.runs.append(proc)

        def running() -> bool:
            status = self.cli("status", "--json")  # fails until the runtime made its store
            return status.returncode == 0 and bool(json.loads(status.stdout)["runtime_running"])

        wait_serving(proc, log, running)
        return proc

    def stop(self) -> None:
        """SIGTERM every run still going; each must exit 0 without a traceback."""
        for n, proc in enumerate(self.runs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0, self.log(n)
            assert "Traceback" not in self.log(n), self.log(n)

    def kill(self) -> None:
        """Kill whatever a failed test left running."""
        for proc in self.runs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
