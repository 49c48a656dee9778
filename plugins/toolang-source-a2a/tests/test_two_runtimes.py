"""Two toolang runtimes in separate processes, each with its own store, on loopback:
A's agent delegates to B's agent over A2A (ask_agent, start_task_run); B's work is in
B's `toolang turns list`, A's trace shows the remote call. And a crash of A while its
remote call is in flight resumes the same remote task: B receives the message once."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from a2a_kit import Runtime, install_kit

from toolang_core import NewTurnRequest, TurnFilter, TurnStatus
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import SubmitRules
from toolang_core.testing.processes import wait_for

B_CONFIG = """
[agents]
default = "reviewer"
instruction = "You review things."

[plugins.source-a2a]
listen = "127.0.0.1:{port}"
tokens = { peer-a = "token-of-a" }
"""


def a_config(b: Runtime, *, call_timeout: float = 60) -> str:
    endpoint = b.url + "/a2a/reviewer"
    return f"""
[plugins.agents-remote]
endpoints = ["{endpoint}"]
tokens = {{ "{endpoint}" = "token-of-a" }}
call_timeout_seconds = {call_timeout}
poll_seconds = 0.02

[plugins.source-a2a]
listen = "127.0.0.1:{{port}}"
"""


A_PLUGINS = "agents-remote,source-a2a,echo-model,source-chat"


def submit(home: Path, text: str, thread: str) -> str:
    store = SQLiteStore(home / ".toolang" / "toolang.db")
    try:
        return store.submit(
            NewTurnRequest(source="chat", thread_id=thread, input=text),
            SubmitRules("chat", 10),
            now=time.time(),
        ).id
    finally:
        store.close()


def turn_of(home: Path, turn_id: str):
    store = SQLiteStore(home / ".toolang" / "toolang.db")
    try:
        return store.get(turn_id)
    finally:
        store.close()


def finished(home: Path, turn_id: str) -> bool:
    turn = turn_of(home, turn_id)
    return turn is not None and turn.status.is_terminal


@pytest.fixture
def pair(tmp_path: Path):
    install_kit(tmp_path / "site")
    b = Runtime(tmp_path / "b", tmp_path / "site", B_CONFIG).start()
    a = Runtime(tmp_path / "a", tmp_path / "site", a_config(b), plugins=A_PLUGINS)
    yield a, b
    a.stop()
    b.stop()


def test_a_delegates_to_b_with_ask_agent_and_start_task_run(pair):
    a, b = pair
    listed = a.cli("agents", "list")
    assert "reviewer" in listed.stdout, listed.stdout + listed.stderr
    a.start()
    asked = submit(a.home, "delegate:ask_agent:reviewer:check the plan", "cli:ask")
    wait_for(lambda: finished(a.home, asked), 60, "A's ask_agent turn")
    turn = turn_of(a.home, asked)
    assert turn.status is TurnStatus.COMPLETED, turn.error
    assert turn.output == 'remote said: {"ok": true, "output": "echo: check the plan"}'

    spawned = submit(a.home, "delegate:start_task_run:reviewer:review the code", "cli:spawn")
    wait_for(lambda: finished(a.home, spawned), 60, "A's start_task_run turn")
    turn = turn_of(a.home, spawned)
    assert turn.status is TurnStatus.COMPLETED, turn.error
    assert "echo: review the code" in (turn.output or "")

    # B's work is in B's own store, as chat turns of the caller peer-a
    listed = b.cli("turns", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    b_store = SQLiteStore(b.home / ".toolang" / "toolang.db")
    b_turns = b_store.list_turns(TurnFilter(limit=50))
    b_store.close()
    assert sorted(t.input for t in b_turns) == ["check the plan", "review the code"]
    assert {(t.source, t.owner, t.channel, t.status) for t in b_turns} == {
        ("chat", "a2a:peer-a", "a2a", TurnStatus.COMPLETED)
    }
    assert all(t.id in listed.stdout for t in b_turns)
    assert b.received() == ["check the plan", "review the code"]

    # A's registry shows the remote agent's card and its recent call outcomes
    shown = a.cli("agents", "show", "reviewer")
    assert shown.returncode == 0, shown.stderr
    assert b.url in shown.stdout and "2 completed" in shown.stdout, shown.stdout

    # A's trace shows the remote call: the ask_agent tool call and the a2a model call
    trace = a.cli("turns", "trace", asked)
    assert trace.returncode == 0, trace.stderr
    assert "ask_agent" in trace.stdout
    assert f"a2a/{b.url}/a2a/reviewer" in trace.stdout


def test_failures_are_clear_tool_errors(tmp_path: Path):
    install_kit(tmp_path / "site")
    b = Runtime(tmp_path / "b", tmp_path / "site", B_CONFIG).start()
    wrong = a_config(b).replace("token-of-a", "not-the-token")
    a = Runtime(tmp_path / "a", tmp_path / "site", wrong, plugins=A_PLUGINS)
    try:
        a.start()
        refused = submit(a.home, "delegate:ask_agent:reviewer:hello", "cli:auth")
        wait_for(lambda: finished(a.home, refused), 60, "the refused call")
        b.stop()  # now B is unreachable
        gone = submit(a.home, "delegate:ask_agent:reviewer:hello again", "cli:gone")
        wait_for(lambda: finished(a.home, gone), 60, "the unreachable call")
    finally:
        a.stop()
        b.stop()
    b.start()  # B again, but A gives up after a second on B's slow work
    slow_a = Runtime(
        tmp_path / "a-slow", tmp_path / "site", a_config(b, call_timeout=1), plugins=A_PLUGINS
    )
    try:
        slow_a.start()
        late = submit(slow_a.home, "delegate:ask_agent:reviewer:slow answer", "cli:late")
        wait_for(lambda: finished(slow_a.home, late), 60, "the timed-out call")
        # the remote task nobody waits for any more is canceled
        wait_for(lambda: b_turns(b)[0].status is TurnStatus.CANCELED, 30, "B's abandoned task")
    finally:
        slow_a.stop()
        b.stop()
    timed_out = SQLiteStore(slow_a.home / ".toolang" / "toolang.db")
    try:
        step = next(s for s in timed_out.steps(late) if s.kind == "tool_call")
        assert "did not answer within 1 s" in json.dumps(step.data["result"])
    finally:
        timed_out.close()
    store = SQLiteStore(a.home / ".toolang" / "toolang.db")
    try:
        results = {}
        for turn_id in (refused, gone):
            step = next(s for s in store.steps(turn_id) if s.kind == "tool_call")
            results[turn_id] = json.dumps(step.data["result"])
    finally:
        store.close()
    assert "refused the credentials" in results[refused] or "401" in results[refused]
    assert "unreachable" in results[gone], results[gone]
    assert "refused the credentials" in results[refused], results[refused]
    assert "not-the-token" not in results[refused]


def b_turns(b: Runtime) -> list:
    store = SQLiteStore(b.home / ".toolang" / "toolang.db")
    try:
        return store.list_turns(TurnFilter(limit=50))
    finally:
        store.close()


def remote_task_recorded(a: Runtime) -> bool:
    import sqlite3

    path = a.home / ".toolang" / "plugins" / "agents-remote.db"  # the call log (SQLite store)
    if not path.exists():
        return False
    db = sqlite3.connect(path)
    try:
        found = db.execute("SELECT count(*) FROM calls WHERE task_id IS NOT NULL").fetchone()
        return bool(found[0])
    except sqlite3.OperationalError:  # the log is being created
        return False
    finally:
        db.close()


def test_a_killed_mid_call_resumes_the_same_remote_task(tmp_path: Path):
    install_kit(tmp_path / "site")
    b = Runtime(tmp_path / "b", tmp_path / "site", B_CONFIG, env={"A2A_SLOW_SECONDS": "4"}).start()
    a = Runtime(tmp_path / "a", tmp_path / "site", a_config(b), plugins=A_PLUGINS)
    try:
        a.start()
        asked = submit(a.home, "delegate:ask_agent:reviewer:slow job", "cli:crash")
        wait_for(lambda: remote_task_recorded(a), 60, "A to record the remote task id")
        wait_for(lambda: len(b_turns(b)) == 1, 30, "B to hold the task")
        a.kill()  # SIGKILL while the remote call is in flight
        assert not turn_of(a.home, asked).status.is_terminal
        a.start()
        wait_for(lambda: finished(a.home, asked), 90, "A's resumed turn")
    finally:
        a.stop()
        b.stop()
    turn = turn_of(a.home, asked)
    assert turn.status is TurnStatus.COMPLETED, turn.error
    assert "echo: slow job" in (turn.output or "")
    assert turn.attempt == 2
    assert b.received() == ["slow job"]  # B got the message once
    assert len(b_turns(b)) == 1


def test_canceling_the_local_turn_cancels_the_remote_task(tmp_path: Path):
    install_kit(tmp_path / "site")
    b = Runtime(tmp_path / "b", tmp_path / "site", B_CONFIG).start()  # slow = 60 s
    a = Runtime(tmp_path / "a", tmp_path / "site", a_config(b), plugins=A_PLUGINS)
    try:
        a.start()
        asked = submit(a.home, "delegate:ask_agent:reviewer:slow and long", "cli:cancel")
        wait_for(
            lambda: [t.status for t in b_turns(b)] == [TurnStatus.RUNNING],
            60,
            "B to run the task",
        )
        canceled = a.cli("cancel", asked)
        assert canceled.returncode == 0, canceled.stderr
        wait_for(
            lambda: [t.status for t in b_turns(b)] == [TurnStatus.CANCELED],
            30,
            "B's task to be canceled",
        )
        wait_for(lambda: finished(a.home, asked), 30, "A's turn to end")
    finally:
        a.stop()
        b.stop()
    assert turn_of(a.home, asked).status is TurnStatus.CANCELED
    assert b.received() == []


def a_call_state(a: Runtime) -> str | None:
    import sqlite3

    path = a.home / ".toolang" / "plugins" / "agents-remote.db"  # the call log (SQLite store)
    if not path.exists():
        return None
    db = sqlite3.connect(path)
    try:
        row = db.execute("SELECT state FROM calls ORDER BY started DESC LIMIT 1").fetchone()
        return None if row is None else str(row[0])
    except sqlite3.OperationalError:  # the log is being created
        return None
    finally:
        db.close()


def test_an_approval_on_b_is_input_required_to_a_and_approving_completes_a(tmp_path: Path):
    install_kit(tmp_path / "site")
    gated = B_CONFIG + '\n[plugins.hook-approval-gate]\nrequire = ["kit_note"]\n'
    b = Runtime(
        tmp_path / "b",
        tmp_path / "site",
        gated,
        plugins="source-a2a,echo-model,source-chat,hook-approval-gate",
    ).start()
    a = Runtime(tmp_path / "a", tmp_path / "site", a_config(b), plugins=A_PLUGINS)
    try:
        a.start()
        asked = submit(a.home, "delegate:ask_agent:reviewer:tool:remember this", "cli:gate")
        wait_for(lambda: a_call_state(a) == "input-required", 60, "A to see input-required")
        assert not turn_of(a.home, asked).status.is_terminal
        pending = b.cli("approvals", "list", "--json")
        assert pending.returncode == 0, pending.stderr
        approval_id = json.loads(pending.stdout)[0]["id"]
        approved = b.cli("approvals", "approve", approval_id)
        assert approved.returncode == 0, approved.stderr
        wait_for(lambda: finished(a.home, asked), 60, "A's turn after the approval")
    finally:
        a.stop()
        b.stop()
    turn = turn_of(a.home, asked)
    assert turn.status is TurnStatus.COMPLETED, turn.error
    assert "noted remember this" in (turn.output or "")
    assert a_call_state(a) == "completed"


def test_the_outgoing_request_passes_the_security_filter(tmp_path: Path):
    install_kit(tmp_path / "site")
    b = Runtime(tmp_path / "b", tmp_path / "site", B_CONFIG).start()
    a = Runtime(
        tmp_path / "a",
        tmp_path / "site",
        a_config(b),
        plugins=A_PLUGINS + ",hook-security-filter",
    )
    try:
        a.start()
        asked = submit(
            a.home, "delegate:ask_agent:reviewer:mail jane.doe@example.com the plan", "cli:pii"
        )
        wait_for(lambda: finished(a.home, asked), 60, "A's filtered call")
    finally:
        a.stop()
        b.stop()
    assert turn_of(a.home, asked).status is TurnStatus.COMPLETED
    [received] = b.received()
    assert "jane.doe@example.com" not in received  # masked before it left A
    assert "redacted" in received


def test_transfer_to_agent_and_agent_spawn_reach_the_remote_agent(tmp_path: Path):
    install_kit(tmp_path / "site")
    b = Runtime(tmp_path / "b", tmp_path / "site", B_CONFIG, env={"A2A_NO_DELEGATE": "1"}).start()
    a = Runtime(tmp_path / "a", tmp_path / "site", a_config(b), plugins=A_PLUGINS)
    try:
        a.start()
        handed = submit(a.home, "delegate:transfer_to_agent:reviewer:take over", "cli:transfer")
        wait_for(lambda: finished(a.home, handed), 60, "the transferred turn")
        spawned = submit(a.home, "delegate:agent_spawn:reviewer:look into it", "cli:teammate")
        wait_for(lambda: finished(a.home, spawned), 60, "the spawning turn")
        wait_for(lambda: len(b.received()) == 2, 60, "B to answer the teammate")
    finally:
        a.stop()
        b.stop()
    turn = turn_of(a.home, handed)
    assert turn.status is TurnStatus.COMPLETED, turn.error
    # after the hand-off the remote agent answered the user's message itself
    assert turn.output == "echo: delegate:transfer_to_agent:reviewer:take over"
    assert b.received() == ["delegate:transfer_to_agent:reviewer:take over", "look into it"]
    assert {t.owner for t in b_turns(b)} == {"a2a:peer-a"}
