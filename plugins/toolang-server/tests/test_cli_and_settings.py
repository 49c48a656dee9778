"""``toolang init`` turns the server on, ``toolang serve`` starts it, and settings that
would open the runtime to the network without a token are refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

ONLY_SERVER = {"TOOLANG_LOAD_PLUGINS": "server"}


def test_init_enables_the_server_on_loopback_and_doctor_accepts_it(toolang_cli, toolang_home):
    toolang_home.config_path.unlink()
    result = toolang_cli("init", env=ONLY_SERVER)
    assert result.returncode == 0, result.stderr
    text = toolang_home.config_path.read_text()
    assert '[plugins.server]\nenabled = true\nhost = "127.0.0.1"\nport = 8765' in text
    doctor = toolang_cli("doctor", env=ONLY_SERVER)
    assert "is valid" in doctor.stdout, doctor.stdout


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ('host = "0.0.0.0"', "plugins.server: host: '0.0.0.0' is reachable from other machines"),
        ('tokens = { alice = "short" }', "tokens.alice: a token of 16 characters or more"),
        ("port = 70000", "port: a TCP port 1-65535"),
        ("enabled = 'yes'", "plugins.server.enabled"),
    ],
)
def test_bad_server_settings_are_config_errors_naming_the_key(
    toolang_cli, toolang_home, section, expected
):
    toolang_home.write_config(f"[plugins.server]\n{section}\n")
    result = toolang_cli("run", env=ONLY_SERVER, timeout=60)
    assert result.returncode != 0
    assert expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert not (toolang_home.path / ".toolang" / "toolang.db").exists()


def test_serve_starts_the_server_whatever_enabled_says_and_stops_on_sigterm(toolang_home):
    toolang_home.write_config('[runtime]\nexecutor = "echo"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(ONLY_SERVER)
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolang_core", "serve", "--port", "0"],
        cwd=toolang_home.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url_file = toolang_home.path / ".toolang" / "server.url"
    deadline = time.monotonic() + 60
    while not url_file.is_file():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "toolang serve never listened"
        time.sleep(0.05)
    url = url_file.read_text().strip()
    try:
        answer = httpx.post(f"{url}/api/turns", json={"input": "ping", "wait": 60}, timeout=90)
        assert answer.json()["output"] == "ping"  # the echo executor
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert f"toolang server: console {url}/" in stderr
    assert not url_file.exists()


def test_serve_says_at_once_which_runtime_already_serves_the_store_and_its_console(
    live_server, toolang_cli, toolang_distribution
):
    """A second `toolang serve` does not wait 30 s for a runtime that will not stop: it
    fails at once (no wait announced), naming the holder and where its console is."""
    server = live_server()
    env = {"TOOLANG_LOAD_PLUGINS": "server,test-kit", "PYTHONPATH": str(toolang_distribution.root)}
    result = toolang_cli("--log-format", "json", "serve", "--port", "0", env=env)
    assert result.returncode == 4, result.stderr
    assert "runtime.waiting_for_store" not in result.stderr  # it did not wait
    assert (
        f"error: a runtime is already serving this store (pid {server.proc.pid}, run "
    ) in result.stderr
    assert f"its console is {server.url}/ (API {server.url}/api; " in result.stderr
    assert "`toolang console` prints a sign-in link" in result.stderr
    assert server.proc.poll() is None  # the one serving goes on


def test_a_port_in_use_is_reported_and_the_runtime_still_runs(toolang_cli, toolang_home):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        toolang_home.write_config(
            f'[runtime]\nexecutor = "echo"\n[plugins.server]\nenabled = true\nport = {port}\n'
        )
        result = toolang_cli("run", "--until-idle", env=ONLY_SERVER, timeout=60)
    assert result.returncode == 0, result.stderr
    assert (
        f"toolang server: not started: toolang-server cannot listen on 127.0.0.1:{port} "
        "(Address already in use); set [plugins.server] port"
    ) in result.stderr
    assert "Traceback" not in result.stderr


def test_a_one_shot_serve_opens_no_port(toolang_runtime, capfd):
    """A one-shot runtime (``serve(only=…)``: `toolang chat`/`invoke` with no runtime
    serving, running its own turn and exiting) is no server; a long-lived one is."""
    import asyncio
    import socket

    import toolang_server
    from toolang_core import NewTurnRequest

    with socket.socket() as probe:  # a free port, named in the config
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = f'[runtime]\nexecutor = "echo"\n[plugins.server]\nenabled = true\nport = {port}\n'

    def serve(*, one_shot: bool) -> str:
        runtime = toolang_runtime(config, plugins={"server": toolang_server})
        inbox = runtime.open_inbox()
        turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="hi")).id
        inbox.store.close()
        only = [turn_id] if one_shot else None
        asyncio.run(runtime.serve(asyncio.Event(), sources=(), only=only, until_idle=True))
        return capfd.readouterr().err

    assert "toolang server" not in serve(one_shot=True)
    assert f"console http://127.0.0.1:{port}/" in serve(one_shot=False)


def test_a_run_that_starts_no_server_is_not_delivered_its_turns(toolang_runtime):
    """With no server to wait on over HTTP (one-shot, or not enabled), the plugin's
    delivery hook is inactive for the run: the turn records no delivery stage for it."""
    import asyncio

    import toolang_server
    from toolang_core import NewTurnRequest
    from toolang_core.runtime.after_turn import AFTER_KIND

    def delivered_by(config: str, *, one_shot: bool) -> object:
        runtime = toolang_runtime(config, plugins={"server": toolang_server})
        inbox = runtime.open_inbox()
        turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="hi")).id
        only = [turn_id] if one_shot else None
        asyncio.run(runtime.serve(asyncio.Event(), sources=(), only=only, until_idle=True))
        after = inbox.store.get_record(AFTER_KIND, turn_id)
        inbox.store.close()
        stages = after.data["stages"] if after is not None else []
        return [s["detail"]["by"] for s in stages if s["stage"] == "delivery"]

    echo = '[runtime]\nexecutor = "echo"\n'
    assert delivered_by(echo + "[plugins.server]\nenabled = false\n", one_shot=False) == []
    assert delivered_by(echo + "[plugins.server]\nenabled = true\nport = 0\n", one_shot=True) == []
    assert delivered_by(echo + "[plugins.server]\nenabled = true\nport = 0\n", one_shot=False) == [
        ["server"]
    ]


ONE_SHOT = """
import asyncio, sys
from pathlib import Path

import toolang_server
from toolang_core import NewTurnRequest, Runtime
from toolang_core.config import load_config

home = Path(sys.argv[1])
(home / "toolang.toml").write_text(
    '[runtime]\\nexecutor = "echo"\\n[plugins.server]\\nenabled = true\\nport = 9\\n'
)
env = {"HOME": str(home)}
runtime = Runtime.with_plugins(load_config(home / "toolang.toml", env=env),
                               [("server", toolang_server)], env=env)
inbox = runtime.open_inbox()
turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="hi")).id
inbox.store.close()
asyncio.run(runtime.serve(asyncio.Event(), sources=(), only=[turn_id], until_idle=True))
assert runtime.open_inbox().get(turn_id).output == "hi"
print("\\n".join(sorted(sys.modules)))
"""


def test_a_one_shot_serve_imports_neither_uvicorn_nor_starlette(tmp_path):
    """What serves HTTP loads when a server starts, not for a one-shot chat's turn."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", ONE_SHOT, str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    modules = set(done.stdout.split())
    assert "toolang_server" in modules
    for heavy in ("uvicorn", "starlette", "toolang_server.serve", "toolang_server.app"):
        assert heavy not in modules, heavy
