"""`toolang chat -a PATH|URL` in a real subprocess: the file reaches the model, and a
file that is too large, of a type not taken, unreadable, or for a model that takes no
such type is refused at the door, naming the file and what was expected, with nothing
submitted."""

from __future__ import annotations

import base64
import json

import pytest

from toolang_core.testing.cli import assert_no_traceback
from toolang_core.testing.dists import make_distribution

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.05
shutdown_grace_seconds = 0

[models]
default = "scripted"
"""


@pytest.fixture
def chat(tmp_path, toolang_home):
    """``chat(*args, types=None, config="")``: ``toolang chat`` with the file-scripted
    model (answering with the attachments it got) in a subprocess."""
    from toolang_core.testing.cli import run_toolang

    site = tmp_path / "site"
    make_distribution(
        site,
        "toolang-test-scripted",
        entry_points={"toolang": {"scripted": "toolang_core.testing.script_file_plugin"}},
    )
    script = toolang_home.path / "script.json"
    script.write_text(json.dumps([{"text": "{attachments}"}]))

    def run(*args, types=None, config="", input=None):
        toolang_home.write_config(CONFIG + config)
        env = {"TOOLANG_LOAD_PLUGINS": "source-chat,scripted", "TOOLANG_SCRIPT": str(script)}
        if types is not None:
            env["TOOLANG_SCRIPT_ATTACHMENT_TYPES"] = types
        return run_toolang(
            "chat",
            *args,
            cwd=toolang_home.path,
            env=env,
            pythonpath=[site],
            timeout=120,
            input=input,
        )

    return run


def turns(toolang_cli):
    listed = toolang_cli("turns", "list", "--json", env={"TOOLANG_LOAD_PLUGINS": "source-chat"})
    return json.loads(listed.stdout)


def test_an_attached_image_reaches_the_model(chat, toolang_home, toolang_cli):
    (toolang_home.path / "dot.png").write_bytes(PNG)
    (toolang_home.path / "note.txt").write_text("hello\n")
    result = chat("-a", "dot.png", "--attach", "note.txt", "what are these?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"dot.png image/png {len(PNG)}; note.txt text/plain 6\n"
    (turn,) = turns(toolang_cli)
    assert [a["name"] for a in turn["meta"]["attachments"]] == ["dot.png", "note.txt"]
    stored = [p for p in (toolang_home.path / ".toolang" / "attachments").rglob("*") if p.is_file()]
    assert sorted(p.read_bytes() for p in stored) == sorted([PNG, b"hello\n"])


def test_an_attachment_over_the_limit_is_refused_at_the_door(chat, toolang_home, toolang_cli):
    (toolang_home.path / "dot.png").write_bytes(PNG)
    result = chat("-a", "dot.png", "look", config="[attachments]\nmax_bytes = 10\n")
    assert result.returncode == 2
    assert_no_traceback(result)
    assert "'dot.png'" in result.stderr and "over the limit of 10 bytes" in result.stderr
    assert turns(toolang_cli) == []


def test_a_type_not_taken_is_refused_at_the_door_naming_the_file(chat, toolang_home, toolang_cli):
    (toolang_home.path / "photo.png").write_bytes(b"\x00\x01 not an image")
    result = chat("-a", "photo.png", "look")
    assert result.returncode == 2
    assert_no_traceback(result)
    assert "'photo.png': its bytes are application/octet-stream" in result.stderr
    assert turns(toolang_cli) == []


def test_a_model_that_takes_no_images_is_refused_at_the_door(chat, toolang_home, toolang_cli):
    (toolang_home.path / "dot.png").write_bytes(PNG)
    result = chat("-a", "dot.png", "look", types="text/plain")
    assert result.returncode == 2
    assert_no_traceback(result)
    assert "model 'scripted' does not accept attachment 'dot.png' of type image/png" in (
        result.stderr
    )
    assert turns(toolang_cli) == []
    assert not (toolang_home.path / ".toolang" / "attachments").exists()  # nothing kept


def test_an_unreadable_path_and_a_url_without_fetching_are_named(chat, toolang_home):
    missing = chat("-a", "nowhere.png", "look")
    assert missing.returncode == 2
    assert_no_traceback(missing)
    assert "'nowhere.png': cannot be read" in missing.stderr
    url = chat("-a", "http://127.0.0.1:9/x.png", "look")
    assert url.returncode == 2
    assert "fetching URLs is off ([attachments] fetch_urls = false)" in url.stderr


def test_a_url_is_fetched_when_fetch_urls_is_on(chat):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")  # a lie: the bytes decide
            self.send_header("Content-Length", str(len(PNG)))
            self.end_headers()
            self.wfile.write(PNG)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/pics/dot.png"
        result = chat("-a", url, "look", config="[attachments]\nfetch_urls = true\n")
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"dot.png image/png {len(PNG)}\n"


# -- /attach in an interactive session ----------------------------------------------------


def test_slash_attach_sends_the_file_with_the_next_message_only(chat, toolang_home, toolang_cli):
    (toolang_home.path / "dot.png").write_bytes(PNG)
    result = chat("-i", input="/attach dot.png\nwhat is it?\nand now?\n")
    assert result.returncode == 0, result.stderr
    assert_no_traceback(result)
    assert f"attached dot.png (image/png, {len(PNG)} bytes) to your next message" in result.stderr
    first, second = sorted(turns(toolang_cli), key=lambda t: t["seq"])
    assert first["input"] == "what is it?"
    assert [a["name"] for a in first["meta"]["attachments"]] == ["dot.png"]
    assert second["input"] == "and now?" and "attachments" not in second["meta"]
    assert f"dot.png image/png {len(PNG)}" in result.stdout


def test_a_refused_slash_attach_is_said_and_the_session_goes_on(chat, toolang_home, toolang_cli):
    (toolang_home.path / "dot.png").write_bytes(PNG)
    result = chat("-i", input="/attach dot.png\n/attach gone.png\nlook\n", types="text/plain")
    assert result.returncode == 0, result.stderr
    assert_no_traceback(result)
    assert "error: " in result.stderr and "dot.png" in result.stderr
    assert "image/png" in result.stderr
    assert "error: " in result.stderr and "gone.png" in result.stderr
    (turn,) = turns(toolang_cli)
    assert turn["input"] == "look" and "attachments" not in turn["meta"]
    assert "(none)" in result.stdout


def test_slash_attach_alone_lists_what_the_next_message_carries(chat, toolang_home):
    (toolang_home.path / "note.txt").write_text("hello\n")
    result = chat("-i", input="/attach\n/attach note.txt\n/attach\n")
    assert result.returncode == 0, result.stderr
    assert "attached to your next message: none" in result.stderr
    assert "attached to your next message: note.txt" in result.stderr


def test_dash_a_with_dash_i_attaches_to_the_first_message(chat, toolang_home, toolang_cli):
    (toolang_home.path / "dot.png").write_bytes(PNG)
    result = chat("-i", "-a", "dot.png", input="look\n")
    assert result.returncode == 0, result.stderr
    (turn,) = turns(toolang_cli)
    assert [a["name"] for a in turn["meta"]["attachments"]] == ["dot.png"]


def test_a_refused_dash_a_with_dash_i_exits_2_before_the_session(chat, toolang_home, toolang_cli):
    result = chat("-i", "-a", "gone.png", input="look\n")
    assert result.returncode == 2
    assert_no_traceback(result)
    assert "gone.png" in result.stderr and "chatting on" not in result.stderr
    assert turns(toolang_cli) == []
