"""Only a signed-in person decides, over HTTP too: a caller on this machine without a
credential reads and submits but cannot approve, deny, grant or cancel others' work;
the operator's credential, owners' tokens and console sessions can, and the decision
names who. Sign-in links work once; failed authentications are logged without what
was presented and limited per client. A real ``toolang run`` serves every test."""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import sys
import time

import httpx
from server_helpers import (
    TOKEN_CONFIG,
    TOKENS,
    install_test_plugin,
    open_runtime_store,
    server_environment,
    spawn_run,
    wait_for,
)

from toolang_core import ApprovalBook, NewTurnRequest

WRITE = '/tool guarded_write {"name": "f.txt", "text": "x"}'


def parked(client: httpx.Client) -> tuple[str, dict[str, object]]:
    """A turn parked on guarded_write, and its pending request."""
    turn_id = client.post("/api/turns", json={"input": WRITE}).json()["turn_id"]
    (approval,) = wait_for(
        lambda: client.get("/api/approvals", params={"status": "pending"}).json(),
        what="the approval request",
    )
    return turn_id, approval


def test_a_loopback_caller_without_a_credential_cannot_approve_deny_or_grant(open_server):
    with open_server.client() as local:
        assert local.get("/api/session").json() == {
            "owner": None,
            "sender": "http:local",
            "principal": None,
            "person": False,
        }
        turn_id, approval = parked(local)
        for action, body in (("approve", {}), ("approve", {"always": True}), ("deny", {})):
            refused = local.post(f"/api/approvals/{approval['id']}/{action}", json=body)
            assert refused.status_code == 401, (action, body, refused.text)
            error = refused.json()["error"]
            assert error["field"] == "Authorization"
            assert "needs a signed-in person" in error["message"]
            assert "toolang console" in error["expected"]
        (still,) = local.get("/api/approvals").json()
        assert (still["status"], still["decided_by"]) == ("pending", None)
        assert local.get(f"/api/turns/{turn_id}").json()["status"] == "awaiting_approval"
    _runtime, store = open_runtime_store(open_server)
    try:
        assert ApprovalBook(store).grants() == []
    finally:
        store.close()
    assert not (open_server.home / "out" / "f.txt").exists()
    log = open_server.stop()
    assert log.count('"server.person_required"') == 3


def test_the_operator_credential_as_a_bearer_token_decides_as_token_operator(open_server):
    with open_server.client(open_server.operator_credential()) as operator:
        assert operator.get("/api/session").json()["principal"] == "token:operator"
        turn_id, approval = parked(operator)
        decided = operator.post(
            f"/api/approvals/{approval['id']}/approve", json={"always": True}
        ).json()
        assert (decided["status"], decided["decided_by"], decided["always"]) == (
            "approved",
            "token:operator",
            True,
        )
        wait_for(lambda: operator.get(f"/api/turns/{turn_id}").json()["status"] == "completed")
    _runtime, store = open_runtime_store(open_server)
    try:
        (grant,) = ApprovalBook(store).grants()
        assert (grant["tool"], grant["by"]) == ("guarded_write", "token:operator")
    finally:
        store.close()


def test_an_owner_token_decides_as_token_owner(token_server):
    with token_server.client(TOKENS["bob"]) as bob:
        _turn_id, approval = parked(bob)
        decided = bob.post(f"/api/approvals/{approval['id']}/deny").json()
        assert (decided["status"], decided["decided_by"]) == ("denied", "token:bob")


def test_without_a_credential_a_caller_cancels_only_what_it_submitted(open_server):
    slow = '/tool slow_wait {"seconds": 120}'
    runtime, store = open_runtime_store(open_server)
    inbox = runtime.open_inbox()
    try:
        theirs = inbox.submit(
            NewTurnRequest(source="chat", thread_id="cli:x", input=slow, sender="cli:someone")
        ).id
    finally:
        inbox.store.close()
    run_id = spawn_run(open_server, "owner", slow)
    with open_server.client() as local:
        mine = local.post("/api/turns", json={"input": slow, "thread_id": "http:mine"}).json()
        assert local.post(f"/api/turns/{mine['turn_id']}/cancel").status_code == 200
        for path in (f"/api/turns/{theirs}/cancel", f"/api/task-runs/{run_id}/cancel"):
            refused = local.post(path)
            assert refused.status_code == 401, (path, refused.text)
            assert "needs a signed-in person" in refused.json()["error"]["message"]
    with open_server.client(open_server.operator_credential()) as operator:
        canceled = operator.post(f"/api/turns/{theirs}/cancel").json()
        assert canceled["changed"]
        assert operator.post(f"/api/task-runs/{run_id}/cancel").json()["changed"] is True
    try:
        wait_for(lambda: store.get(theirs).status.value == "canceled")  # type: ignore[attr-defined]
        assert store.get(theirs).error == "canceled by token:operator"  # type: ignore[attr-defined]
    finally:
        store.close()  # type: ignore[attr-defined]


def test_a_sign_in_link_opens_a_session_once_and_the_session_decides(open_server):
    link = open_server.new_sign_in_link()  # as `toolang console` prints one
    with httpx.Client(timeout=60) as browser:
        opened = browser.get(link)
        assert opened.status_code == 200, opened.text
        cookie = opened.headers["set-cookie"].lower()
        port = httpx.URL(open_server.url).port
        assert cookie.startswith(f"toolang_session_{port}=")
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert opened.headers["referrer-policy"] == "same-origin"
        assert token_of(link) not in cookie
        session = browser.get(f"{open_server.url}/api/session").json()
        assert (session["principal"], session["owner"]) == ("console:operator", None)
        _turn_id, approval = parked(httpx.Client(base_url=open_server.url, timeout=60))
        decided = browser.post(f"{open_server.url}/api/approvals/{approval['id']}/approve")
        assert decided.json()["decided_by"] == "console:operator"
        browser.post(f"{open_server.url}/logout", headers={"Origin": open_server.url})
        assert browser.get(f"{open_server.url}/api/session").json()["person"] is False
    with httpx.Client(timeout=60) as other:
        again = other.get(link)
        assert again.status_code == 401
        assert "used already" in again.text
        assert "set-cookie" not in again.headers


def token_of(link: str) -> str:
    return link.partition("token=")[2]


def test_a_log_that_is_not_a_terminal_holds_no_sign_in_link(open_server):
    # A service's journal, a container's log: kept, not read, so no link that signs in.
    log = open_server.stop()
    assert "toolang server: sign in: run `toolang --config " in log  # how, where and who
    assert "console`, as the account running this, for a one-time link" in log
    assert "login?token=" not in log


def test_on_a_terminal_run_prints_a_sign_in_link_that_opens_a_session(
    toolang_home, toolang_distribution
):
    install_test_plugin(toolang_distribution)
    env = server_environment(toolang_home.path, toolang_distribution.root)
    pid, fd = os.forkpty()
    if pid == 0:  # the child: `toolang run` with a terminal for its output
        try:
            os.chdir(toolang_home.path)
            argv = [sys.executable, "-m", "toolang_core", "--log-format", "json", "run"]
            os.execve(sys.executable, argv, env)
        finally:
            os._exit(127)
    shown = b""
    try:
        deadline = time.monotonic() + 60
        while (found := re.search(rb"sign in: (http\S+)\s", shown)) is None:  # all of it
            assert time.monotonic() < deadline, shown.decode(errors="replace")
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # the child ended (EIO on Linux)
                    chunk = b""
                if not chunk:
                    raise AssertionError(shown.decode(errors="replace"))
                shown += chunk
        link = found.group(1).decode()
        with httpx.Client(timeout=60) as browser:
            opened = browser.get(link)
            assert opened.status_code == 200, opened.text
            assert "toolang_session_" in opened.headers["set-cookie"]
    finally:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while os.waitpid(pid, os.WNOHANG) == (0, 0):  # read on: a full terminal blocks it
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            if select.select([fd], [], [], 0.2)[0]:
                with contextlib.suppress(OSError):  # the child has ended
                    os.read(fd, 65536)
        os.close(fd)


def test_expired_forged_and_foreign_sign_in_links_open_nothing(open_server):
    from toolang_server.signin import sign_in_url

    credential = open_server.operator_credential()
    old = sign_in_url(open_server.url, credential, now=time.time() - 3600)
    issued, nonce, _mac = token_of(sign_in_url(open_server.url, credential)).split(".")
    forged = f"{open_server.url}/login?token={issued}.{nonce}.{'0' * 32}"
    foreign = sign_in_url(open_server.url, "another-runtime-credential-0123456789abcdef")
    with httpx.Client(timeout=60) as browser:
        for link, why in ((old, "expired"), (forged, "not a sign-in link"), (foreign, "not")):
            refused = browser.get(link)
            assert refused.status_code == 401 and why in refused.text, link
            assert "set-cookie" not in refused.headers
    log = open_server.stop()
    assert log.count('"server.auth_failed"') == 3
    for link in (old, forged, foreign):
        assert token_of(link) not in log


def test_failed_authentication_is_logged_without_the_token_and_limited_per_client(live_server):
    server = live_server(
        "auth_failure_limit = 3\nauth_failure_window_seconds = 3600\n" + TOKEN_CONFIG,
        env={"BOB_TOKEN": TOKENS["bob"]},
    )
    wrong = "sk-wrong-but-secret-looking-0123456789"
    with server.client(wrong) as guesser:
        for _ in range(3):
            assert guesser.get("/api/status").status_code == 401
        limited = guesser.get("/api/status")
        assert limited.status_code == 429
        assert 0 < int(limited.headers["retry-after"]) <= 3600
        assert limited.json()["error"]["field"] == "Authorization"
    with server.client(TOKENS["alice"]) as alice:  # the same client: refused, even right
        assert alice.get("/api/status").status_code == 429
    with httpx.Client(base_url=server.url, timeout=60) as form:
        signing_in = form.post("/login", data={"token": TOKENS["alice"]})
        assert signing_in.status_code == 429
        assert form.get("/api/health").status_code == 200  # no credential, nothing limited
    log = server.stop()
    assert log.count('"server.auth_failed"') == 3
    assert wrong not in log and TOKENS["alice"] not in log


def test_toolang_console_prints_a_link_only_where_the_credential_can_be_read(
    open_server, toolang_cli
):
    env = {"TOOLANG_LOAD_PLUGINS": "server"}
    made = toolang_cli("console", env=env)
    assert made.returncode == 0, made.stderr
    link = made.stdout.strip()
    assert link.startswith(f"{open_server.url}/login?token=")
    with httpx.Client(timeout=60) as browser:
        assert browser.get(link).status_code == 200
        assert browser.get(f"{open_server.url}/api/session").json()["person"] is True
    marked = toolang_cli("console", env={**env, "TOOLANG_TOOL_CALL": "t-1:c-1"})
    assert marked.returncode != 0 and "started by tool call t-1:c-1" in marked.stderr
    credential = open_server.home / ".toolang" / "credential"
    credential.rename(credential.with_name("away"))
    missing = toolang_cli("console", env=env)
    assert missing.returncode != 0 and "no operator credential" in missing.stderr
    assert "login?token=" not in missing.stdout


def test_no_owner_may_be_named_operator(toolang_cli, toolang_home):
    toolang_home.write_config(
        '[plugins.server]\n[plugins.server.tokens]\noperator = "a-token-of-twenty-chars"\n'
    )
    result = toolang_cli("doctor", env={"TOOLANG_LOAD_PLUGINS": "server"})
    assert result.returncode != 0
    assert "tokens.operator: the name 'operator' is reserved" in result.stdout + result.stderr
