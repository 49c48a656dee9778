"""toolang-server with the other plugins installed: a real `toolang run` whose chore
source fires, seen through the HTTP API and the console's chores page."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx

CONFIG = """
[runtime]
executor = "echo"
sources = ["chore", "task"]
poll_seconds = 0.05

[plugins.server]
enabled = true
port = 0

[plugins.source-chore]
poll_seconds = 0.2
chores = [{ key = "tick", schedule = "every 1 seconds", input = "chore says hi" }]

[plugins.source-task]
poll_seconds = 0.2
"""


def test_chores_and_their_turns_over_http(tmp_path):
    (tmp_path / "toolang.toml").write_text(CONFIG)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env["TOOLANG_LOAD_PLUGINS"] = "server,source-chore,source-task"
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolang_core", "run"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url_file = tmp_path / ".toolang" / "server.url"
    try:
        deadline = time.monotonic() + 60
        while not url_file.is_file():
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the server never listened"
            time.sleep(0.05)
        with httpx.Client(base_url=url_file.read_text().strip(), timeout=30) as client:
            deadline = time.monotonic() + 30
            while True:
                (chore,) = client.get("/api/chores").json()
                if chore["last"] is not None and chore["last"]["status"] == "completed":
                    break
                assert time.monotonic() < deadline, f"the chore never ran: {chore}"
                time.sleep(0.1)
            assert (chore["key"], chore["schedule"]) == ("tick", "every 1 seconds")
            assert chore["next"] > time.time() - 1
            turns = client.get("/api/turns", params={"thread_id": "chore:tick"}).json()
            assert turns[-1]["output"] == "chore says hi"
            page = client.get("/chores")
            assert page.status_code == 200
            assert "every 1 seconds" in page.text and "chore:tick" in page.text

            # toolang-source-task mounts its own routes on the same server.
            added = client.post("/api/tasks", json={"title": "Write notes", "ref": "notes"})
            assert added.status_code == 200, added.text
            assert added.json()["thread_id"] == "task:notes"
            assert client.get("/api/tasks/notes").json()["title"] == "Write notes"
            assert [t["ref"] for t in client.get("/api/tasks").json()] == ["notes"]
            missing = client.get("/api/tasks/nope")
            assert (missing.status_code, missing.json()["error"]["field"]) == (404, "ref")
            bad = client.post("/api/tasks", json={"title": ""})
            assert (bad.status_code, bad.json()["error"]["field"]) == (400, "title")
            again = client.post("/api/tasks", json={"title": "x", "ref": "notes"})
            assert again.status_code == 409
            deep = client.post(
                "/api/tasks",
                content=b"[" * 100_000 + b"]" * 100_000,
                headers={"content-type": "application/json"},
            )
            assert (deep.status_code, deep.json()["error"]["field"]) == (400, "body")
            wait_for_turn = time.monotonic() + 30
            while not client.get("/api/turns", params={"thread_id": "task:notes"}).json():
                assert time.monotonic() < wait_for_turn, "the task was never handed over"
                time.sleep(0.1)
            document = client.get("/api/openapi.json").json()
            assert document["paths"]["/api/tasks"]["post"]["tags"] == ["source-task"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
