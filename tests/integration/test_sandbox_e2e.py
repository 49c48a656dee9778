"""The sandbox against the attacks of issue #30, end to end: a real `toolang run` (with
the HTTP server, the approval gate and sqlite memory) whose scripted model runs
`exec_run` for owner m; the command is the attack the test wrote into m's working
directory (``sh attack.sh``). Each attack really runs and fails:

- approving a pending approval over the runtime's HTTP port, or by writing the store
  with sqlite3 (the CLI where installed, else Python's module);
- crossing owners: `toolang turns list`, `memory search --owner a`, `submit --owner a`
  from inside, reading another owner's token in toolang.toml;
- reading the runtime's environment through /proc/$PPID/environ and /proc/1/environ;
- outliving the call: a setsid, double-forked daemon that drops the marker is dead after
  `toolang cancel`, and after a SIGKILL of the runtime and its restart.

Then the network: with ``network = "off"`` nothing reaches a listener of the test on
127.0.0.1 or the runtime's port; with ``"allow"`` only an allowed host is reached,
through the proxy. And with ``sandbox = "off"`` doctor, `toolang run` and the console
say so in red — and the same `cat toolang.toml` reads the token.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from served_home import ServedHome, scripted_site

from toolang_core import ApprovalBook, ApprovalKeyFile
from toolang_core.sandbox.support import sandbox_support
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, SubmitRules, TurnFilter
from toolang_core.testing.processes import wait_for
from toolang_core.tools.approval_seal import ensure_approval_key

for needed in ("toolang_tools_operator", "toolang_hook_approval_gate", "toolang_server"):
    pytest.importorskip(needed)
pytest.importorskip("toolang_memory_sqlite")

pytestmark = pytest.mark.skipif(
    not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().problem}"
)

PLUGINS = "scripted,tools-operator,hook-approval-gate,server,memory-sqlite"
TOKEN_OF_A = "token-of-a-5f3c9e1d7b2a4c6e"
RUNTIME_SECRET = "sk-runtime-environ-7d41"
SCRIPT = [
    {
        "tool_calls": [
            {
                "id": "c1",
                "name": "exec_run",
                "params": {"command": "sh attack.sh", "timeout_seconds": 300},
            }
        ]
    },
    {"text": "done"},
]
CONFIG = f"""
[runtime]
executor = "agent"
poll_seconds = 0.05
shutdown_grace_seconds = 0
lease_seconds = 3

[models]
default = "scripted"

[memory]
plugin = "sqlite"

[plugins.tools-operator]
exec_timeout_seconds = 300

[plugins.hook-approval-gate]
auto_approve = ["exec_run"]

[plugins.server]
enabled = true
port = 0
tokens = {{ a = "{TOKEN_OF_A}", m = "token-of-m-0a1b2c3d4e5f6a7b" }}

[tools]
# The attack script takes about a minute on a busy machine: the call's own limit
# (60 s by default) must not end it first.
timeout_seconds = 600
"""
# Leaves its session and its parent, ignores SIGTERM and SIGHUP, drops the marker, and
# writes a heartbeat into the working directory every 50 ms.
DAEMON = (
    'setsid sh -c \'(trap "" TERM HUP; exec env -u TOOLANG_TOOL_CALL sh -c '
    '"while :; do date +%s%N >> beat; sleep 0.05; done") &\'\n'
)
PY = sys.executable


class Home(ServedHome):
    """A served home whose owner m runs ``attack.sh`` from its working directory."""

    def __init__(self, path: Path, site: Path, config: str) -> None:
        super().__init__(path, site, config, SCRIPT)
        self.env.update(TOOLANG_LOAD_PLUGINS=PLUGINS, OPENAI_API_KEY=RUNTIME_SECRET)

    @property
    def workdir_of_m(self) -> Path:
        return self.path / "workspace" / "owners" / "m"

    def attack(self, script: str) -> None:
        self.workdir_of_m.mkdir(parents=True, exist_ok=True)
        (self.workdir_of_m / "attack.sh").write_text(script)

    def submit(self, text: str, owner: str, thread: str) -> str:
        done = self.cli("submit", text, "--thread", thread, "--owner", owner)
        assert done.returncode == 0, done.stderr
        return str(json.loads(done.stdout)["id"])

    def ended(self, turn_id: str) -> dict[str, Any]:
        wait_for(
            lambda: self.status_of(turn_id) in ("completed", "failed", "canceled"),
            120,
            f"turn {turn_id} to end",
        )
        return self.turn(turn_id)

    def output_of(self, turn_id: str) -> dict[str, Any]:
        shown = self.ended(turn_id)
        assert shown["turn"]["status"] == "completed", shown["turn"]
        (call,) = [s for s in shown["steps"] if s["kind"] == "tool_call"]
        output: dict[str, Any] = call["data"]["result"]["output"]
        return output

    @property
    def url(self) -> str:
        written = self.path / ".toolang" / "server.url"
        wait_for(lambda: written.is_file() and written.read_text().strip(), 60, "the server")
        return written.read_text().strip()

    def kill_runtime(self) -> None:
        proc = self.runs.pop()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)


@pytest.fixture
def make_home(tmp_path: Path) -> Iterator[Any]:
    site = scripted_site(tmp_path / "site")
    homes: list[Home] = []

    def make(config: str = CONFIG) -> Home:
        home = Home(tmp_path / "home", site, config)
        homes.append(home)
        return home

    yield make
    for home in homes:
        home.kill()


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP listener of the test on 127.0.0.1 that must never see a connection."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        yield server
        assert nobody_came(server)  # checked again as it closes


def nobody_came(server: socket.socket) -> bool:
    try:
        server.accept()
    except BlockingIOError:
        return True
    return False


def beats(directory: Path) -> int:
    beat = directory / "beat"
    return len(beat.read_text().splitlines()) if beat.exists() else 0


def no_more_beats(directory: Path) -> bool:
    """No new heartbeat line over 0.5 s (ten beats' worth)."""
    before = beats(directory)
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        time.sleep(0.05)
    return beats(directory) == before


def pending_approval(home: Home) -> str:
    """A request waiting for a person, on a turn that waits for its time (an hour)."""
    store = SQLiteStore(home.path / ".toolang" / "toolang.db")
    try:
        victim = store.submit(
            NewTurnRequest(
                source="chat", thread_id="chat:victim", input="later", not_before=time.time() + 3600
            ),
            SubmitRules("chat", 10),
            now=time.time(),
        ).id
        key_file = ApprovalKeyFile(home.path / ".toolang" / "approval.key")
        key, _ = ensure_approval_key(key_file, store, now=time.time())  # as a runtime would
        approval = ApprovalBook(store, key=key).create(
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
    finally:
        store.close()
    return approval.id


def http_post(url: str) -> str:
    """A POST from inside: curl where installed, else Python."""
    return (
        f'if command -v curl >/dev/null; then curl -sS -m 5 -X POST "{url}"; '
        f"else {PY} -c \"import urllib.request as u; u.urlopen(u.Request('{url}', "
        f'method=\'POST\'), timeout=5)"; fi; echo "post=$?"\n'
    )


def sql(store: Path, statement: str) -> str:
    """Write the store from inside: the sqlite3 CLI where installed, else Python."""
    return (
        f'if command -v sqlite3 >/dev/null; then sqlite3 "{store}" "{statement}"; '
        f'else {PY} -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); '
        f'c.execute(sys.argv[2]); c.commit()" "{store}" "{statement}"; fi; echo "sql=$?"\n'
    )


def test_the_attacks_of_a_tools_program_fail_in_the_sandbox(make_home, listener):
    home = make_home()
    approval = pending_approval(home)
    home.start()
    store = home.path / ".toolang" / "toolang.db"
    config = home.path / "toolang.toml"
    toolang = f"{PY} -m toolang_core"

    # Owner a's work: a turn (its input and what memory kept of it) and a token.
    secret_turn = home.submit("my locker code is 5531", "a", "chat:a")
    assert home.ended(secret_turn)["turn"]["status"] == "completed"
    kept = home.cli("memory", "search", "locker", "--owner", "a", "--json")
    assert kept.returncode == 0 and "5531" in kept.stdout, kept  # it is there to steal

    port = int(home.url.rsplit(":", 1)[1])
    home.attack(
        "exec 2>&1\n"
        + http_post(f"{home.url}/api/approvals/{approval}/approve")
        + sql(store, "update records set data=json_set(data, '$.status', 'approved')")
        + f"cat {config}; echo config=$?\n"
        + "tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/1/environ\n"
        + f"{toolang} turns list --json; {toolang} --config {config} turns list --json\n"
        + f"{toolang} memory search locker --owner a; "
        + f"{toolang} --config {config} memory search locker --owner a\n"
        + f"{toolang} submit 'from m, as a' --thread chat:a --owner a\n"
        + f"{toolang} --config {config} submit 'from m, as a' --thread chat:a --owner a\n"
        + f"{toolang} --config {config} approvals approve {approval}; echo approve=$?\n"
        + f"{PY} -c \"import socket; socket.create_connection(('127.0.0.1', "
        + f'{listener.getsockname()[1]}), 3)"; echo listener=$?\n'
        + f"{PY} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3)\"; "
        + "echo runtime_port=$?\n"
    )
    output = home.output_of(home.submit("attack", "m", "chat:m"))
    seen = output["stdout"] + output["stderr"]

    # Nothing of the attack worked …
    for line in ("post=0", "sql=0", "approve=0", "listener=0", "runtime_port=0"):
        assert line not in seen, seen
    assert "Connection refused" in seen or "Couldn't connect" in seen
    for secret in (TOKEN_OF_A, RUNTIME_SECRET, "5531"):
        assert secret not in seen, (secret, seen)
    assert "TOOLANG_TOOL_CALL=" in seen  # /proc/1/environ: only the call's own variables
    # … and nothing changed where it counts.
    assert nobody_came(listener)
    reader = SQLiteStore(store, read_only=True)
    try:
        key_file = ApprovalKeyFile(Path(store).parent / "approval.key")
        assert ApprovalBook(reader, key=key_file).get(approval).status == "pending"
        inputs = [t.input for t in reader.list_turns(TurnFilter(thread_id="chat:a"))]
    finally:
        reader.close()
    assert inputs == ["my locker code is 5531"]
    assert TOKEN_OF_A in config.read_text()
    home.stop()


def test_a_daemon_that_left_its_session_dies_with_cancel_and_with_a_killed_runtime(make_home):
    home = make_home()
    home.start()
    where = home.workdir_of_m

    home.attack(DAEMON + "sleep 300\n")
    canceled = home.submit("run a daemon", "m", "chat:m")
    wait_for(lambda: beats(where) >= 3, 60, "the daemon's heartbeat")
    assert home.cli("cancel", canceled).returncode == 0
    assert home.ended(canceled)["turn"]["status"] == "canceled"
    assert no_more_beats(where)

    (where / "beat").unlink()
    killed = home.submit("run a daemon again", "m", "chat:m2")
    wait_for(lambda: beats(where) >= 3, 60, "the daemon's heartbeat")
    home.kill_runtime()
    wait_for(lambda: no_more_beats(where), 10, "the heartbeat to stop with the runtime")

    home.start()  # the call is in doubt: not run again, and nothing of it came back
    shown = home.ended(killed)
    assert (shown["turn"]["status"], shown["turn"]["output"]) == ("completed", "done")
    (step,) = [s for s in shown["steps"] if s["kind"] == "tool_call"]
    assert step["data"]["in_doubt"]["decision"] == "told_model"
    assert no_more_beats(where)
    home.stop()


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"hello from an allowed host\n")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def allowed_server() -> Iterator[int]:
    """An HTTP server of the test on 127.0.0.2 (a local address: the sandbox reaches it
    only because the test names it in ``unsafe_allow_local``)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.2", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return int(probe.getsockname()[1])


@pytest.mark.skipif(not os.access("/usr/bin/curl", os.X_OK), reason="curl is not installed")
def test_with_network_allowed_only_allowed_hosts_are_reached_through_the_proxy(
    make_home, listener, allowed_server
):
    """127.0.0.2 is allowed (by name and, unsafely, as a local target); the test's
    listener on 127.0.0.1 is allowed by name only, so its address is still refused; the
    runtime's own port is refused even though both lists name it."""
    allowed = f"127.0.0.2:{allowed_server}"
    mine = f"127.0.0.1:{listener.getsockname()[1]}"
    runtime = f"127.0.0.1:{free_port()}"
    home = make_home(
        CONFIG.replace("port = 0", f"port = {runtime.rsplit(':', 1)[1]}")
        + f"""
network = "allow"
allow_hosts = ["{allowed}", "{mine}", "{runtime}"]
unsafe_allow_local = ["{allowed}", "{runtime}"]
"""
    )
    home.start()
    curl = "curl -sS -m 10"
    code = "-o /dev/null -w '%{http_code}\\n'"
    home.attack(
        "exec 2>&1\n"
        f"{curl} http://{allowed}/; echo allowed=$?\n"
        f"{curl} {code} http://{mine}/; echo loopback=$?\n"
        f"{curl} {code} http://{runtime}/api/status; echo runtime=$?\n"
        f"{curl} https://example.com/; echo other=$?\n"
        f"{curl} --noproxy '*' http://{allowed}/; echo direct=$?\n"
    )
    output = home.output_of(home.submit("reach out", "m", "chat:m"))
    lines = output["stdout"].splitlines()
    assert "hello from an allowed host" in lines and "allowed=0" in lines, lines
    assert lines[lines.index("loopback=0") - 1] == "403", lines  # refused by the proxy
    assert lines[lines.index("runtime=0") - 1] == "403", lines
    assert "other=0" not in lines and "direct=0" not in lines, lines
    assert nobody_came(listener)
    log = home.log(0)
    assert "is the runtime's own" in log and "this machine's" in log
    assert "example.com:443 is not in allow_hosts" in log
    home.stop()


# -- with the sandbox off -----------------------------------------------------------------

OFF_CONFIG = f"""
[runtime]
executor = "agent"
poll_seconds = 0.05
shutdown_grace_seconds = 0

[models]
default = "scripted"

[tools]
sandbox = "off"

[plugins.hook-approval-gate]
auto_approve = ["exec_run"]

[plugins.server]
enabled = true
port = 0
# the token a would have: {TOKEN_OF_A}
"""


def test_with_the_sandbox_off_doctor_run_and_the_console_say_so(make_home):
    home = make_home(OFF_CONFIG)
    doctor = home.cli("doctor")
    assert 'warn  sandbox    the tool sandbox is OFF ([tools] sandbox = "off")' in doctor.stdout

    home.start()
    assert "WARNING: the tool sandbox is OFF" in home.log(0)
    page = httpx.get(home.url + "/", timeout=30)
    assert page.status_code == 200
    assert 'class="banner danger"' in page.text and "the tool sandbox is OFF" in page.text

    home.attack(f"cat {home.path / 'toolang.toml'}\n")
    output = home.output_of(home.submit("read the config", "m", "chat:m"))
    assert TOKEN_OF_A in output["stdout"]  # what the sandbox would have hidden
    home.stop()


def test_a_required_sandbox_that_is_there_is_reported_ok_and_warns_nobody(make_home):
    home = make_home()
    doctor = home.cli("doctor")
    assert "ok    sandbox    tools' programs run sandboxed" in doctor.stdout, doctor.stdout
    home.start()
    assert "WARNING" not in home.log(0)
    page = httpx.get(home.url + "/", headers={"Authorization": f"Bearer {TOKEN_OF_A}"})
    assert "banner danger" not in page.text
    home.stop()
