"""An agent cannot approve itself: a turn whose `exec_run` runs `toolang approvals approve`
on a pending request is refused — also when the command drops the marker variable —
and the request stays pending. Real `toolang run`, real shell, real CLI.

Runs where toolang-tools-operator and toolang-hook-approval-gate are installed (the tox
`integration` env); the runtime loads only those two and the test kit's scripted model,
so the refusal seen is the approval path's own, not the SecurityFilter's — and with the
tool sandbox off, so that it is the marker's: in the sandbox the command sees neither
the config nor the store (tests/integration/test_sandbox_e2e.py), and the marker is the
line behind it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolang_core import ApprovalBook, ApprovalKeyFile
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, SubmitRules
from toolang_core.testing import make_distribution
from toolang_core.testing.cli import run_toolang
from toolang_core.testing.processes import wait_for
from toolang_core.testing.runtimes import SCRIPTED_AGENT_CONFIG
from toolang_core.tools.approval_seal import ensure_approval_key

pytest.importorskip("toolang_tools_operator")
pytest.importorskip("toolang_hook_approval_gate")

CONFIG = (
    SCRIPTED_AGENT_CONFIG
    + """
[plugins.tools-operator]
workspace = "workspace"

[plugins.hook-approval-gate]
auto_approve = ["exec_run"]

[tools]
sandbox = "off"
"""
)
TOOLANG = f"{sys.executable} -m toolang_core --config ../toolang.toml"
COMMAND = (
    f"{TOOLANG} approvals approve $(cat ../approval_id) --always; echo exit=$?; "
    f"env -u TOOLANG_TOOL_CALL {TOOLANG} approvals deny $(cat ../approval_id); echo exit=$?"
)


def test_a_tool_running_toolang_approvals_approve_is_refused_and_the_request_stays_pending(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    make_distribution(
        site,
        "toolang-test-scripted",
        entry_points={"toolang": {"scripted": "toolang_core.testing.script_file_plugin"}},
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "toolang.toml").write_text(CONFIG)
    script = home / "script.json"
    script.write_text(
        json.dumps(
            [
                {"tool_calls": [{"id": "c1", "name": "exec_run", "params": {"command": COMMAND}}]},
                {"text": "I tried"},
            ]
        )
    )
    # A request waiting for a person, on a turn that is not over (it waits for its time).
    store = SQLiteStore(home / ".toolang" / "toolang.db")
    victim = store.submit(
        NewTurnRequest(
            source="chat", thread_id="chat:victim", input="later", not_before=time.time() + 3600
        ),
        SubmitRules("chat", 10),
        now=time.time(),
    ).id
    key_file = ApprovalKeyFile(home / ".toolang" / "approval.key")
    key, _ = ensure_approval_key(key_file, store, now=time.time())  # as a runtime would
    pending = ApprovalBook(store, key=key).create(
        turn_id=victim,
        call_id="c1",
        tool="fs_write",
        params={"path": "x", "text": "y"},
        thread_id="chat:victim",
        agent="operator",
        requester="owner",
        prompt="write x?",
        timeout_seconds=None,
    )
    (home / "approval_id").write_text(pending.id)

    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(
        TOOLANG_LOAD_PLUGINS="scripted,tools-operator,hook-approval-gate",
        TOOLANG_SCRIPT=str(script),
        PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
    )
    runtime = subprocess.Popen(
        [sys.executable, "-m", "toolang_core", "run", "--no-sources"],
        cwd=home,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        agent_turn = store.submit(
            NewTurnRequest(source="chat", thread_id="chat:agent", input="approve it"),
            SubmitRules("chat", 10),
            now=time.time(),
        ).id
        store.wake()
        wait_for(
            lambda: (t := store.get(agent_turn)) is not None and t.status.is_terminal,
            60,
            "the agent's turn to end",
        )
    finally:
        runtime.send_signal(signal.SIGTERM)
        _, err = runtime.communicate(timeout=60)
    assert runtime.returncode == 0, err

    (call,) = [s for s in store.steps(agent_turn) if s.kind == "tool_call"]
    output = call.data["result"]["output"]
    assert output["stdout"].splitlines() == ["exit=6", "exit=6"], output
    refusals = [line for line in output["stderr"].splitlines() if line.startswith("error:")]
    assert len(refusals) == 2, output["stderr"]
    for line in refusals:
        assert "refused to" in line and "started by tool call" in line
        assert "only a person decides approvals" in line
    # This store was opened by hand: reading decisions needs the key the runtime made.
    book = ApprovalBook(store, key=ApprovalKeyFile(home / ".toolang" / "approval.key"))
    assert book.get(pending.id).status == "pending"
    assert not book.granted("chat:victim", "fs_write")

    # A person at a terminal still decides.
    decided = run_toolang(
        "approvals",
        "deny",
        pending.id,
        cwd=home,
        env={"TOOLANG_LOAD_PLUGINS": "hook-approval-gate"},
    )
    assert decided.returncode == 0, decided.stderr
    assert book.get(pending.id).status == "denied"
    store.close()
