"""Only a person decides, on every door that writes the store directly: the CLI decides
with the operator's credential and is refused without it, and a decision written
straight into the SQLite store with `sqlite3` is ignored — the turn stays parked.
Real `toolang run`, real CLI, real `sqlite3`.

Runs in the tox `integration` env (toolang-hook-approval-gate and toolang-tools-operator
installed); the model is the test kit's script-file model.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from served_home import ServedHome, scripted_site

from toolang_core.testing.cli import run_toolang
from toolang_core.testing.processes import wait_for
from toolang_core.testing.runtimes import SCRIPTED_AGENT_CONFIG

CONFIG = SCRIPTED_AGENT_CONFIG + '\n[plugins.tools-operator]\nworkspace = "workspace"\n'
WRITE = {"path": "notes/decided.txt", "text": "written after a person said yes"}
SCRIPT = [
    {"tool_calls": [{"id": "c1", "name": "fs_write", "params": WRITE}]},
    {"text": "done"},
]


@pytest.fixture
def home(tmp_path: Path) -> Iterator[ServedHome]:
    served = ServedHome(tmp_path / "home", scripted_site(tmp_path / "site"), CONFIG, SCRIPT)
    served.start()
    try:
        yield served
    finally:
        served.kill()


def parked(home: ServedHome) -> tuple[str, dict[str, Any]]:
    """A turn parked on its fs_write, and its pending request."""
    submitted = home.cli("submit", "write it", "--thread", "chat:people", "--agent", "operator")
    assert submitted.returncode == 0, submitted.stderr
    turn_id = json.loads(submitted.stdout)["id"]
    wait_for(lambda: home.status_of(turn_id) == "awaiting_approval", 60, "the turn to park")
    (request,) = home.json("approvals", "list")
    return turn_id, request


def still_pending(home: ServedHome, turn_id: str, approval_id: str) -> bool:
    (request,) = home.json("approvals", "list", "--all")
    return (
        request["id"] == approval_id
        and request["status"] == "pending"
        and home.status_of(turn_id) == "awaiting_approval"
        and not (home.path / "workspace" / WRITE["path"]).exists()
    )


def approve(home: ServedHome, approval_id: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_toolang(
        "approvals",
        "approve",
        approval_id,
        "--always",
        cwd=home.path,
        env={**home.env, **env},
        pythonpath=[home.site],
    )


def completes(home: ServedHome, turn_id: str) -> None:
    wait_for(lambda: home.status_of(turn_id) == "completed", 60, "the turn to complete")
    assert (home.path / "workspace" / WRITE["path"]).read_text() == WRITE["text"]


def test_the_cli_decides_with_the_credential_and_is_refused_without_it(home):
    turn_id, request = parked(home)
    credential = home.path / ".toolang" / "credential"
    away = credential.with_name("credential.away")

    def hide() -> None:
        credential.rename(away)

    def unhide() -> None:
        away.rename(credential)

    def lock() -> None:
        hide()
        if os.geteuid() == 0:  # root reads any file: a directory in its place it cannot
            credential.mkdir()
        else:
            shutil.copy(away, credential)
            credential.chmod(0)

    def unlock() -> None:
        if credential.is_dir():
            credential.rmdir()
        else:
            credential.unlink()
        unhide()

    refusals: list[tuple[str, Callable[[], None], Callable[[], None]]] = [
        ("no operator credential at", hide, unhide),
        ("cannot read the operator credential", lock, unlock),
    ]
    for expected, before, after in refusals:
        before()
        try:
            refused = approve(home, request["id"])
        finally:
            after()
        assert refused.returncode == 6, refused.stderr
        assert expected in refused.stderr and "Nothing was changed" in refused.stderr
        assert still_pending(home, turn_id, request["id"])
    marked = approve(home, request["id"], TOOLANG_TOOL_CALL="t-x:c-1")
    assert marked.returncode == 6
    assert "started by tool call t-x:c-1" in marked.stderr
    assert still_pending(home, turn_id, request["id"])
    assert home.json("approvals", "list", "--all")[0]["decided_by"] is None

    approved = approve(home, request["id"])
    assert approved.returncode == 0, approved.stderr
    completes(home, turn_id)
    (decided,) = home.json("approvals", "list", "--all")
    assert (decided["status"], decided["decided_by"], decided["always"]) == (
        "approved",
        f"cli:{getpass.getuser()}",
        True,
    )
    home.stop()


def test_a_decision_forged_with_sqlite3_is_ignored_logged_and_the_turn_stays_parked(home):
    sqlite3 = shutil.which("sqlite3")
    assert sqlite3, "the sqlite3 command-line shell is needed (`apt-get install -y sqlite3`)"
    turn_id, request = parked(home)
    forged = subprocess.run(
        [
            sqlite3,
            str(home.path / ".toolang" / "toolang.db"),
            "update records set data=json_set(data,'$.status','approved',"
            "'$.decided_by','cli:someone-else') "
            f"where kind='toolang.approval' and json_extract(data,'$.id')='{request['id']}'",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert forged.returncode == 0, forged.stderr
    # The runtime's wait reads the forged record, logs it and keeps waiting.
    wait_for(lambda: "approval.decision_forged" in home.log(0), 60, "the forgery to be seen")
    assert still_pending(home, turn_id, request["id"])
    listed = home.cli("approvals", "list", "--all")
    assert "approval.decision_forged" in listed.stderr  # the CLI says so too
    assert "someone-else" not in listed.stdout

    approved = approve(home, request["id"])  # a person still decides it
    assert approved.returncode == 0, approved.stderr
    completes(home, turn_id)
    (decided,) = home.json("approvals", "list", "--all")
    assert decided["decided_by"] == f"cli:{getpass.getuser()}"
    home.stop()
