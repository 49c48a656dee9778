"""`toolang approvals list | show | approve | deny`, run as the real command in a
subprocess against the store of a toolang home."""

from __future__ import annotations

import getpass
import json

import pytest

from toolang_core import ApprovalBook, NewTurnRequest

ENV = {"TOOLANG_LOAD_PLUGINS": "hook-approval-gate"}


@pytest.fixture
def inbox(toolang_runtime):
    """The home's inbox (its store is the one the command opens)."""
    opened = toolang_runtime("").open_inbox()
    yield opened
    opened.store.close()


@pytest.fixture
def book(inbox):
    return ApprovalBook(inbox.store)


@pytest.fixture
def ask(inbox, book):
    """``ask(tool, params, thread)``: a pending request of a real queued turn."""

    def make(tool="fs_write", params=None, thread="cli:t"):
        turn = inbox.submit(NewTurnRequest(source="chat", thread_id=thread, input="go"))
        return book.create(
            turn_id=turn.id,
            call_id="c1",
            tool=tool,
            params=params if params is not None else {"path": "a.txt", "text": "hi"},
            thread_id=thread,
            agent="assistant",
            requester="owner",
            prompt=f"assistant wants to run {tool}",
            timeout_seconds=None,
        )

    return make


def listed(toolang_cli, *flags):
    result = toolang_cli("approvals", "list", "--json", *flags, env=ENV)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_list_shows_pending_requests_and_all_shows_decided_ones_too(toolang_cli, book, ask):
    first, second = ask(), ask("exec_run", {"command": "ls"})
    book.decide(first.id, approved=True, by="alice")
    assert [a["id"] for a in listed(toolang_cli)] == [second.id]
    everything = listed(toolang_cli, "--all")
    assert [(a["id"], a["status"]) for a in everything] == [
        (first.id, "approved"),
        (second.id, "pending"),
    ]
    assert everything[1]["turn_status"] == "queued"


def test_list_prints_a_table_people_can_read(toolang_cli, ask):
    request = ask()
    result = toolang_cli("approvals", "list", env=ENV)
    assert result.returncode == 0, result.stderr
    header, row = result.stdout.splitlines()
    assert header.split() == [
        "ID", "STATUS", "TOOL", "TURN", "THREAD", "REQUESTER", "ASKED", "PARAMS"
    ]  # fmt: skip
    assert row.split()[:3] == [request.id, "pending", "fs_write"]
    assert '{"path":"a.txt","text":"hi"}' in row


def test_list_masks_secrets_in_parameters(toolang_cli, ask):
    ask("exec_run", {"command": "curl -H 'Authorization: Bearer abcdefgh12345'", "token": "t0k"})
    result = toolang_cli("approvals", "list", env=ENV)
    (shown,) = listed(toolang_cli)
    assert shown["params"]["token"] == "********"
    assert "abcdefgh12345" not in result.stdout + json.dumps(shown)
    assert "t0k" not in result.stdout


def test_list_before_anything_ran_says_there_is_nothing(toolang_cli):
    result = toolang_cli("approvals", "list", env=ENV)
    assert result.returncode == 0
    assert "no approval requests" in result.stderr
    assert listed(toolang_cli) == []


def test_show_prints_one_request_with_its_parameters(toolang_cli, ask):
    request = ask()
    result = toolang_cli("approvals", "show", request.id, env=ENV)
    assert result.returncode == 0, result.stderr
    assert f"id         {request.id}" in result.stdout
    assert '"path": "a.txt"' in result.stdout
    assert "expires    never" in result.stdout


def test_approve_records_the_os_user_and_the_reason(toolang_cli, book, ask):
    request = ask()
    result = toolang_cli("approvals", "approve", request.id, "--reason", "fine", env=ENV)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"approved {request.id}: fs_write")
    decided = book.get(request.id)
    assert (decided.status, decided.decided_by, decided.reason, decided.always) == (
        "approved",
        f"cli:{getpass.getuser()}",
        "fine",
        False,
    )
    assert not book.granted("cli:t", "fs_write")


def test_approve_always_grants_the_tool_on_the_thread(toolang_cli, book, ask):
    request = ask(thread="cli:work")
    result = toolang_cli("approvals", "approve", request.id, "--always", env=ENV)
    assert result.returncode == 0, result.stderr
    assert "fs_write is granted on thread cli:work from now on" in result.stdout
    assert book.get(request.id).always
    assert book.granted("cli:work", "fs_write")
    assert not book.granted("cli:other", "fs_write")


def test_deny_records_the_decision_and_its_reason(toolang_cli, book, ask):
    request = ask()
    result = toolang_cli("approvals", "deny", request.id, "--reason", "too risky", env=ENV)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"denied {request.id}")
    decided = book.get(request.id)
    assert (decided.status, decided.decided_by, decided.reason) == (
        "denied",
        f"cli:{getpass.getuser()}",
        "too risky",
    )


@pytest.mark.parametrize("command", ["approve", "deny", "show"])
def test_an_unknown_id_is_a_clear_error(toolang_cli, ask, command):
    ask()
    result = toolang_cli("approvals", command, "ap-nope", env=ENV)
    assert result.returncode == 6
    assert "error: no approval request 'ap-nope' (see `toolang approvals list`)" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unknown_id_before_anything_ran_is_a_clear_error(toolang_cli):
    result = toolang_cli("approvals", "approve", "ap-nope", env=ENV)
    assert result.returncode != 0
    assert "no execution store" in result.stderr
    assert "Traceback" not in result.stderr


def test_deciding_twice_is_a_clear_error_and_keeps_the_first_decision(toolang_cli, book, ask):
    request = ask()
    assert toolang_cli("approvals", "deny", request.id, env=ENV).returncode == 0
    again = toolang_cli("approvals", "approve", request.id, env=ENV)
    assert again.returncode == 6
    assert f"error: approval {request.id} was already denied" in again.stderr
    assert book.get(request.id).status == "denied"


def test_deciding_for_a_turn_that_already_ended_says_nothing_waits(toolang_cli, inbox, ask):
    request = ask()
    inbox.cancel(request.turn_id)
    result = toolang_cli("approvals", "approve", request.id, env=ENV)
    assert result.returncode == 6
    assert f"turn {request.turn_id} already ended (canceled)" in result.stderr
    assert "nothing waits for this decision" in result.stderr
    listed = toolang_cli("approvals", "list", "--all", "--json", env=ENV)
    assert '"expired"' in listed.stdout
