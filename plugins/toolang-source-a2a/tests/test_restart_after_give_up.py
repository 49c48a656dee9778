"""Runtime B (serving A2A) killed while it runs a task for runtime A: A's call loses
its connection and gives up on the task (its CancelTask cannot reach B, which is down).
When B starts again it must not run that task again — nobody waits for it. A toolang
caller says so in its message (``toolang.resume_after_restart``: it stops following a
task whose connection is lost), and B ends such a task ``canceled`` at start-up instead
of resuming it. A caller that does not say so (any other A2A client) keeps the durable
behaviour: its task is resumed."""

from __future__ import annotations

import time
from pathlib import Path

from a2a_kit import Runtime, install_kit

from toolang_core import NewTurnRequest, TurnStatus
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


def a_config(b: Runtime) -> str:
    endpoint = b.url + "/a2a/reviewer"
    return f"""
[plugins.agents-remote]
endpoints = ["{endpoint}"]
tokens = {{ "{endpoint}" = "token-of-a" }}
call_timeout_seconds = 120
poll_seconds = 0.02
"""


def store_of(runtime: Runtime) -> SQLiteStore:
    return SQLiteStore(runtime.home / ".toolang" / "toolang.db")


def b_turns(b: Runtime):
    store = store_of(b)
    try:
        return [t for t in store.list_turns() if t.channel == "a2a"]
    finally:
        store.close()


def submit(a: Runtime, text: str) -> str:
    store = store_of(a)
    try:
        request = NewTurnRequest(source="chat", thread_id="cli:give-up", input=text)
        return store.submit(request, SubmitRules("chat", 10), now=time.time()).id
    finally:
        store.close()


def turn(runtime: Runtime, turn_id: str):
    store = store_of(runtime)
    try:
        return store.get(turn_id)
    finally:
        store.close()


def test_b_restarted_does_not_run_again_a_task_a_gave_up_on(tmp_path: Path):
    install_kit(tmp_path / "site")
    b = Runtime(tmp_path / "b", tmp_path / "site", B_CONFIG, env={"A2A_SLOW_SECONDS": "120"})
    b.start()
    a = Runtime(
        tmp_path / "a",
        tmp_path / "site",
        a_config(b),
        plugins="agents-remote,echo-model,source-chat",
    )
    try:
        a.start(serves=False)
        asked = submit(a, "delegate:ask_agent:reviewer:slow review")
        wait_for(lambda: [t.status for t in b_turns(b)] == [TurnStatus.RUNNING], 60, "B to run it")
        b.kill()  # SIGKILL: B's turn is left running, A's call loses its connection
        wait_for(lambda: turn(a, asked).status.is_terminal, 60, "A to give up on the call")
        b.env["A2A_SLOW_SECONDS"] = "0"  # were it run again, it would answer at once
        b.start()
        wait_for(lambda: b_turns(b)[0].status.is_terminal, 60, "B's task to end")
        log = b.stop()
    finally:
        a.stop()
        b.stop()
    given_up = turn(a, asked)
    assert "unreachable" in (given_up.output or "") + (given_up.error or "")
    (task,) = b_turns(b)
    assert task.status is TurnStatus.CANCELED
    assert "its caller stopped following it" in (task.error or "")
    assert b.received() == []  # B's model never answered it: not run again
    assert "a2a.not_resumed" in log


def test_a_task_of_a_caller_that_follows_across_restarts_is_resumed(tmp_path: Path):
    """Another A2A client's task (no ``toolang.resume_after_restart``) stays durable."""
    import httpx

    install_kit(tmp_path / "site")
    b = Runtime(tmp_path / "b", tmp_path / "site", B_CONFIG, env={"A2A_SLOW_SECONDS": "120"})
    b.start()
    try:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {
                    "messageId": "m-durable",
                    "role": "ROLE_USER",
                    "parts": [{"text": "slow but wanted"}],
                },
                "configuration": {"returnImmediately": True},
            },
        }
        headers = {"Authorization": "Bearer token-of-a", "A2A-Version": "1.0"}
        sent = httpx.post(b.url + "/a2a/reviewer", json=body, headers=headers, timeout=30)
        assert sent.status_code == 200 and "error" not in sent.json(), sent.text
        wait_for(lambda: [t.status for t in b_turns(b)] == [TurnStatus.RUNNING], 60, "B to run it")
        b.kill()
        b.env["A2A_SLOW_SECONDS"] = "0"
        b.start()
        wait_for(lambda: b_turns(b)[0].status.is_terminal, 60, "B's task to end")
    finally:
        b.stop()
    (task,) = b_turns(b)
    assert (task.status, task.output, task.attempt) == (
        TurnStatus.COMPLETED,
        "echo: slow but wanted",
        2,
    )
