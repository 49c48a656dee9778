"""A `toolang chat` that fails never leaves its request behind, and one that finds its
thread busy says so at once.

With no `toolang run` serving the store, nothing but the chat itself would ever run its
request: a chat that cannot start its one-shot runtime, is interrupted (Ctrl-C) or runs
out of wait cancels it — durably, with the reason — so the thread is free for the next
chat. A chat whose thread has work ahead of it names that request and its state before
it waits; with no runtime serving, it runs that work first instead of waiting for
nobody. Real `toolang chat` processes on a real store."""

from __future__ import annotations

import json
import queue
import signal
import threading
import time

import pytest
from test_source_chat import (  # noqa: F401 (gated: a fixture)
    AGENT,
    ECHO,
    ENV,
    gated,
    open_store,
    poll,
    start_chat,
    thread_turns,
)

from toolang_core import ApprovalBook, TurnStatus

WAIT = "[plugins.source-chat]\nwait_seconds = {seconds}\n"
"""A chat's wait. The passing runs never reach a long one; it only bounds how long the
code before the fix (a chat behind a request nobody runs) took to fail."""
QUICK_GRACE = AGENT.replace("[models]", "shutdown_grace_seconds = 0.2\n[models]")
"""Agent turns whose runtime hands back a running turn 0.2 s after it is told to stop."""


@pytest.fixture
def scripted(toolang_distribution, toolang_home, tmp_path):
    """The script-file model (``script(steps)`` sets what it answers next) and the
    environment for `toolang chat` in a subprocess."""
    toolang_distribution(
        "toolang-test-chat-frees",
        entry_points={"toolang": {"scripted": "toolang_core.testing.script_file_plugin"}},
    )
    path = tmp_path / "script.json"

    def script(steps: list[dict]) -> None:
        path.write_text(json.dumps(steps))

    script([{"text": "hello"}])
    env = {
        "TOOLANG_LOAD_PLUGINS": "source-chat,scripted",
        "TOOLANG_SCRIPT": str(path),
        "PYTHONPATH": str(toolang_distribution.root),
    }
    return script, env


def only_turn(home, thread):
    (turn,) = thread_turns(home, thread)
    return turn


def finish(proc, timeout=120):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def test_a_chat_whose_one_shot_cannot_start_cancels_its_request(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO + '[memory]\nplugin = "nosuch"\n' + WAIT.format(seconds=120))
    failed = toolang_cli("chat", "--thread", "t", "first", env=ENV)
    assert failed.returncode == 2, failed.stderr
    assert "memory.plugin" in failed.stderr and "Traceback" not in failed.stderr
    turn = only_turn(toolang_home, "cli:t")
    assert turn.status is TurnStatus.CANCELED  # durably: read back from the store
    assert "its chat failed" in (turn.error or "") and "nosuch" in (turn.error or "")

    toolang_home.write_config(ECHO + WAIT.format(seconds=120))
    again = toolang_cli("chat", "--thread", "t", "second", env=ENV)
    assert (again.returncode, again.stdout) == (0, "second\n"), again.stderr
    assert "busy" not in again.stderr


def test_ctrl_c_during_a_one_shot_chat_cancels_its_request_and_frees_the_thread(
    toolang_home, scripted
):
    script, env = scripted
    script([{"text": "too late", "delay": 3600}])
    toolang_home.write_config(AGENT + WAIT.format(seconds=120))
    chat = start_chat(toolang_home, env, "--thread", "t", "slow one")
    try:
        poll(lambda: only_turn_in(toolang_home, "cli:t", TurnStatus.RUNNING))
        chat.send_signal(signal.SIGINT)
        code, out, err = finish(chat)
    finally:
        if chat.poll() is None:
            chat.kill()
    assert code == 130, err
    turn = only_turn(toolang_home, "cli:t")
    assert f"interrupted; request {turn.id} canceled" in err
    assert turn.status is TurnStatus.CANCELED
    assert "interrupted" in (turn.error or "")

    script([{"text": "at once"}])
    again = start_chat(toolang_home, env, "--thread", "t", "quick one")
    code, out, err = finish(again)
    assert (code, out) == (0, "at once\n"), err


def only_turn_in(home, thread, status):
    turns = thread_turns(home, thread)
    return len(turns) == 1 and turns[0].status is status


def test_a_one_shot_chat_that_runs_out_of_wait_cancels_its_request(toolang_home, scripted):
    script, env = scripted
    script([{"text": "too late", "delay": 3600}])
    toolang_home.write_config(QUICK_GRACE + WAIT.format(seconds=1))
    code, _out, err = finish(start_chat(toolang_home, env, "--thread", "t", "slow one"))
    assert code == 75, err
    turn = only_turn(toolang_home, "cli:t")
    assert turn.status is TurnStatus.CANCELED
    assert f"request {turn.id} canceled" in err and "after 1 s" in err
    assert "stopped waiting" in (turn.error or "")

    script([{"text": "at once"}])
    toolang_home.write_config(AGENT + WAIT.format(seconds=120))
    code, out, err = finish(start_chat(toolang_home, env, "--thread", "t", "quick one"))
    assert (code, out) == (0, "at once\n"), err


def test_a_one_shot_chat_behind_a_queued_request_says_so_and_runs_it_first(
    toolang_cli, toolang_home
):
    toolang_home.write_config(ECHO + WAIT.format(seconds=120))
    first = toolang_cli("chat", "--thread", "t", "--no-wait", "first", env=ENV).stdout.strip()
    second = toolang_cli("chat", "--thread", "t", "second", env=ENV)
    assert (second.returncode, second.stdout) == (0, "second\n"), second.stderr
    said = second.stderr.splitlines()[0]
    assert said.startswith(f"thread cli:t is busy: request {first} is queued (since ")
    assert "no runtime serves the store, so this chat runs it first" in said
    turns = {t.id: t for t in thread_turns(toolang_home, "cli:t")}
    assert turns[first].status is TurnStatus.COMPLETED and turns[first].output == "first"


def test_a_chat_behind_a_turn_awaiting_approval_says_which_at_once(toolang_home, gated):  # noqa: F811
    """Another chat's one-shot holds the store and its turn waits for a person: the
    second chat names that request and its state before it waits — and answers once
    the person decided."""
    toolang_home.write_config(AGENT + WAIT.format(seconds=120))
    first = start_chat(toolang_home, gated, "write it", "--thread", "s")
    second = None
    try:
        parked = poll(
            lambda: [
                t
                for t in thread_turns(toolang_home, "cli:s")
                if t.status is TurnStatus.AWAITING_APPROVAL
            ]
        )
        second = start_chat(toolang_home, gated, "write it", "--thread", "s")
        said: queue.Queue[str] = queue.Queue()
        threading.Thread(
            target=lambda: [said.put(line) for line in second.stderr], daemon=True
        ).start()
        line = said.get(timeout=120)
        # Said while the first turn still waits (nobody decided yet): at once.
        assert only_status(toolang_home, parked[0].id) is TurnStatus.AWAITING_APPROVAL
        assert line.startswith(
            f"thread cli:s is busy: request {parked[0].id} is awaiting_approval (since "
        ), line
        assert "yours runs after it" in line
        assert "toolang approvals list" in said.get(timeout=120)
        approve_until_both_exit(toolang_home, first, second)
        assert first.returncode == 0 and second.returncode == 0
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()


def only_status(home, turn_id):
    store = open_store(home)
    try:
        return store.get(turn_id).status
    finally:
        store.close()


def approve_until_both_exit(home, *procs) -> None:
    """Approve every pending request (the gate asks about every call) until ``procs``
    have exited."""
    store = open_store(home)
    try:
        book = ApprovalBook(store)
        deadline = time.monotonic() + 120
        while any(p.poll() is None for p in procs):
            assert time.monotonic() < deadline, "the chats never finished"
            for approval in book.list("pending"):
                book.decide(approval.id, approved=True, by="tester")
            time.sleep(0.05)
    finally:
        store.close()
