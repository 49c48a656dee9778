"""An A2A caller and an HTTP owner of the same name are two owners: each door's
principals have a namespace of their own (A2A's: ``a2a:<caller>``), so neither sees or
joins the other's threads. One real `toolang run` serves both doors on one port.

Runs in the tox `integration` env (toolang-server and toolang-source-a2a installed).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from served_home import ServedHome, scripted_site

from toolang_core.testing.processes import wait_for

pytest.importorskip("toolang_server")
pytest.importorskip("toolang_source_a2a")

HTTP_ALICE = "http-alice-token-0123456789"
A2A_ALICE = "a2a-alice-token-0123456789"
CONFIG = f"""
[runtime]
executor = "echo"
poll_seconds = 0.05
[plugins.server]
enabled = true
port = 0
[plugins.server.tokens]
alice = "{HTTP_ALICE}"
[plugins.source-a2a]
tokens = {{ alice = "{A2A_ALICE}" }}
"""


def a2a_send(url: str, text: str, message_id: str) -> dict[str, object]:
    message = {
        "messageId": message_id,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "contextId": "shared",
    }
    answer = httpx.post(
        f"{url}/a2a/assistant",
        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}},
        headers={"Authorization": f"Bearer {A2A_ALICE}", "A2A-Version": "1.0"},
        timeout=90,
    ).json()
    assert "result" in answer, answer
    task: dict[str, object] = answer["result"]["task"]
    return task


def test_an_a2a_caller_named_like_an_http_owner_shares_nothing_with_it(tmp_path: Path) -> None:
    home = ServedHome(tmp_path / "home", scripted_site(tmp_path / "site"), CONFIG, [])
    home.start()
    try:
        url_file = home.path / ".toolang" / "server.url"
        wait_for(url_file.is_file, 60, "the server to listen")
        url = url_file.read_text().strip()
        task = a2a_send(url, "from a2a alice", "m-1")
        mine = home.turn(str(task["id"]))["turn"]
        assert (mine["owner"], mine["sender"], mine["thread_id"]) == (
            "a2a:alice",
            "a2a:alice",
            "a2a:shared",
        )
        with httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {HTTP_ALICE}"}, timeout=90
        ) as alice:
            assert alice.get("/api/turns").json() == []
            assert alice.get(f"/api/turns/{task['id']}").status_code == 404
            assert alice.get("/api/threads").json() == []
            joined = alice.post("/api/turns", json={"input": "me too", "thread_id": "a2a:shared"})
            assert joined.status_code == 403, joined.text  # another owner's thread
            own = alice.post("/api/turns", json={"input": "hello", "wait": 60}).json()
            assert (own["owner"], own["sender"]) == ("alice", "http:alice")
        listed = httpx.post(
            f"{url}/a2a/assistant",
            json={"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {}},
            headers={"Authorization": f"Bearer {A2A_ALICE}", "A2A-Version": "1.0"},
            timeout=60,
        ).json()
        assert [t["id"] for t in listed["result"]["tasks"]] == [task["id"]]
        home.stop()
    finally:
        home.kill()
