"""No raw secret at rest: after a conversation full of secrets (every format of
:mod:`secret_formats`), grep every file of the toolang home and the JSON log for them.

A real `toolang run` process (JSON log on stderr, into a file) with every plugin of the
repository installed (the tox `integration` env) and the test kit's script-file model.
The SecurityFilter's masking of tool parameters and results is switched off, so the
raw values reach the tools, their results, the model's answers and memory: what keeps
them out of the store, the plugin databases, the memory database and its full-text
index, the log and the CLI's views is the one redaction policy alone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from secret_formats import SECRET_TEXT, leaks

from toolang_core.testing import make_distribution
from toolang_core.testing.cli import run_toolang
from toolang_core.testing.runtimes import SCRIPTED_AGENT_CONFIG

CONFIG = (
    SCRIPTED_AGENT_CONFIG
    + """
[memory]
plugin = "sqlite"

[plugins.tools-operator]
workspace = "workspace"

# Off: the raw values reach tools, results and the model; only the policy at rest is left.
[plugins.hook-security-filter]
redact_params = false
redact_results = false
"""
)


class Home:
    def __init__(self, path: Path, site: Path, script: Path) -> None:
        self.path = path
        self.site = site
        self.script = script
        self.shown: list[str] = []
        """Everything the CLI printed (its views are grepped too)."""

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        result = run_toolang(
            *args, cwd=self.path, env={"TOOLANG_SCRIPT": str(self.script)}, pythonpath=[self.site]
        )
        self.shown += [result.stdout, result.stderr]
        return result

    def wait_for(self, what: str, predicate: Callable[[], Any], timeout: float = 60) -> Any:
        deadline = time.monotonic() + timeout
        while not (found := predicate()):
            assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
            time.sleep(0.1)
        return found

    def turn(self, turn_id: str) -> dict[str, Any]:
        result = self.cli("turns", "show", turn_id, "--json")
        assert result.returncode == 0, result.stderr
        shown: dict[str, Any] = json.loads(result.stdout)
        return shown

    def converse(
        self, script: list[dict[str, Any]], text: str, *args: str, approve: bool = False
    ) -> dict[str, Any]:
        """Submit ``text`` (the model follows ``script``); wait for the turn, approving
        its one tool call that asks (from this process, as a person would); return it."""
        self.script.write_text(json.dumps(script))
        submitted = self.cli("submit", text, "--owner", "ada", *args)
        assert submitted.returncode == 0, submitted.stderr
        turn_id = json.loads(submitted.stdout)["id"]
        if approve:
            self.wait_for(
                "the turn to await approval",
                lambda: self.turn(turn_id)["turn"]["status"] == "awaiting_approval",
            )
            pending = self.cli("approvals", "list", "--json")
            assert pending.returncode == 0, pending.stderr
            (request,) = json.loads(pending.stdout)
            assert self.cli("approvals", "show", request["id"]).returncode == 0
            assert self.cli("approvals", "approve", request["id"]).returncode == 0
        self.wait_for(
            "the turn to finish",
            lambda: self.turn(turn_id)["turn"]["status"] in ("completed", "failed", "canceled"),
        )
        shown = self.turn(turn_id)
        assert shown["turn"]["status"] == "completed", shown
        for view in (("turns", "show", turn_id), ("turns", "trace", turn_id)):
            for extra in ((), ("--json",)):
                assert self.cli(*view, *extra).returncode == 0
        return shown


@pytest.fixture
def home(tmp_path: Path) -> Iterator[tuple[Home, Path]]:
    site = tmp_path / "site"
    make_distribution(
        site,
        "toolang-test-scripted",
        entry_points={"toolang": {"scripted": "toolang_core.testing.script_file_plugin"}},
    )
    home = Home(tmp_path / "home", site, tmp_path / "script.json")
    # ada's turns work in her own directory of the workspace (owners/ada)
    (home.path / "workspace" / "owners" / "ada" / "notes").mkdir(parents=True)
    (home.path / "workspace" / "owners" / "ada" / "notes" / "secrets.txt").write_text(SECRET_TEXT)
    (home.path / "toolang.toml").write_text(CONFIG)
    home.script.write_text("[]")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(
        TOOLANG_SCRIPT=str(home.script),
        PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
    )
    log = tmp_path / "runtime.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "toolang_core",
                "--log-format",
                "json",
                "--log-level",
                "debug",
                "run",
                "--no-sources",
            ],
            cwd=home.path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
            text=True,
        )
        try:

            def running() -> bool:
                assert proc.poll() is None, log.read_text()
                status = home.cli("status", "--json")
                return status.returncode == 0 and bool(json.loads(status.stdout)["runtime_running"])

            home.wait_for("the runtime to start", running)
            yield home, log
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0, log.read_text()


def test_no_raw_secret_in_any_file_of_the_home_nor_in_the_json_log(home):
    home, log = home
    # 1. The secrets in the user's message, in a tool's parameters (memory), in the
    #    model's answer, and in the memory the turn's exchange leaves behind.
    vault = home.converse(
        [
            {"tool_calls": [{"id": "c1", "name": "memory_agent_save",
                             "params": {"key": "vault", "content": SECRET_TEXT}}]},
            {"text": f"Noted, I will remember: {SECRET_TEXT}"},
        ],
        SECRET_TEXT,
        "--thread", "chat:vault", "--agent", "chronicler",
    )  # fmt: skip
    # 2. In a tool's result (a file read) and another tool's parameters (a file written,
    #    after a person approved it: the pending approval kept its parameters).
    home.converse(
        [
            {"tool_calls": [{"id": "r1", "name": "fs_read",
                             "params": {"path": "notes/secrets.txt"}}]},
            {"tool_calls": [{"id": "w1", "name": "fs_write",
                             "params": {"path": "notes/copy.txt", "text": SECRET_TEXT}}]},
            {"text": "copied your notes"},
        ],
        "copy my notes to notes/copy.txt",
        "--thread", "chat:files", "--agent", "operator",
        approve=True,
    )  # fmt: skip
    # 3. Recalled from memory into a later turn's prompt and steps (history too).
    home.converse(
        [
            {"tool_calls": [{"id": "m1", "name": "memory_agent_recall",
                             "params": {"query": "aws github stripe"}}]},
            {"text": "here is what I remember"},
        ],
        "what do you remember about my aws and stripe keys?",
        "--thread", "chat:vault", "--agent", "chronicler",
    )  # fmt: skip
    assert home.cli("memory", "list", "--agent", "chronicler", "--owner", "ada").returncode == 0
    assert home.cli("threads", "show", "chat:vault").returncode == 0
    assert home.cli("turns", "list", "--json").returncode == 0

    # The raw values did flow: the tool that was given them wrote them (outside the home).
    copy = home.path / "workspace" / "owners" / "ada" / "notes" / "copy.txt"
    assert copy.read_text() == SECRET_TEXT
    # And what is stored is masked, not dropped.
    stored = vault["turn"]["input"]
    for mask in ("[card redacted]", "[iban redacted]", "[email redacted]", "[phone redacted]"):
        assert mask in stored
    memory = home.cli("memory", "list", "--agent", "chronicler", "--owner", "ada", "--json")
    assert "[card redacted]" in memory.stdout

    toolang_home = home.path / ".toolang"
    files = [p for p in toolang_home.rglob("*") if p.is_file()]
    names = {str(p.relative_to(toolang_home)) for p in files}
    # The store, the memory database (its full-text index lives in it) and the other
    # plugins' databases, each with its write-ahead log.
    for name in ("toolang.db", "plugins/memory-sqlite.db", "plugins/hook-knowledge-saver.db"):
        assert {name, f"{name}-wal"} <= names, names
    found = {
        str(p.relative_to(home.path)): hits
        for p in files
        if (hits := leaks(p.read_bytes().decode("latin-1")))
    }
    assert found == {}
    log_text = log.read_text()
    assert '"event": "turn.finished"' in log_text
    assert leaks(log_text) == []
    assert leaks("\n".join(home.shown)) == []
