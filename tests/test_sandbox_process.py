"""Programs tools start run in the OS sandbox (toolang_core.sandbox through
run_tool_process): real bubblewrap sandboxes, real processes, real limits (Linux).

What a program must not see or do — the runtime's home, config and store, other owners'
work, the user's secrets, the runtime's environment, the network, capabilities — and
that stopping it stops everything it started, however it tried to leave."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import attrs
import pytest

from toolang_core import SandboxError, ToolCall, run_tool_process
from toolang_core.sandbox import support as support_module
from toolang_core.sandbox.bwrap import bwrap_argv
from toolang_core.sandbox.policy import policy_for
from toolang_core.sandbox.support import SandboxSupport, sandbox_support
from toolang_core.testing.processes import wait_for
from toolang_core.tools import process_ledger
from toolang_core.tools.process_ledger import ProcessIdentity

pytestmark = pytest.mark.skipif(
    not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().problem}"
)

# A daemon that leaves its session and its parent (setsid, then a background subshell
# the first shell does not wait for), ignores SIGTERM and SIGHUP, drops the marker, and
# writes a heartbeat into the working directory every 50 ms.
DAEMON = (
    'setsid sh -c \'(trap "" TERM HUP; exec env -u TOOLANG_TOOL_CALL sh -c '
    '"while :; do date +%s%N >> beat; sleep 0.05; done") &\' ; '
)


def turn_of(owner: str | None) -> SimpleNamespace:
    return SimpleNamespace(request=SimpleNamespace(owner=owner, sender=owner or "owner"))


@pytest.fixture
def make_call(toolang_runtime, toolang_call_context):
    """``make(config="", owner=None)``: a call of ``exec_run`` in a runtime with ``config``
    as its toolang.toml, made for ``owner``'s turn."""

    def make(config: str = "", owner: str | None = None) -> object:
        runtime = toolang_runtime(config)
        return toolang_call_context(
            call=ToolCall("c-1", "exec_run"), turn_id="t-1", runtime=runtime, turn=turn_of(owner)
        )

    return make


def sh(context: object, script: str, **options: object):
    return asyncio.run(run_tool_process(["/bin/sh", "-c", script], context=context, **options))


def workdir_of(context: object) -> Path:
    return policy_for(context).workdir  # type: ignore[arg-type]


def beats(directory: Path) -> int:
    beat = directory / "beat"
    return len(beat.read_text().splitlines()) if beat.exists() else 0


def assert_no_more_beats(directory: Path) -> None:
    """The heartbeat stopped: no new line over 0.5 s (ten beats' worth)."""
    before = beats(directory)
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        time.sleep(0.05)
    assert beats(directory) == before, "something in the sandbox still runs"


# -- what it has and sees ---------------------------------------------------------------


def test_no_capabilities_and_the_mounts_that_hide_things_cannot_be_undone(make_call):
    call = make_call()
    home = call.runtime.config.home
    home.mkdir(parents=True, exist_ok=True)
    (home / "toolang.db").write_text("the store")
    ran = sh(
        call,
        f"grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; "
        f"umount {home}; echo umount=$?; umount -l {home}; echo lazy=$?; "
        f"cat {home}/toolang.db; echo cat=$?",
    )
    lines = ran.stdout.splitlines()
    assert lines[:3] == [f"Cap{k}:\t0000000000000000" for k in ("Prm", "Eff", "Bnd")], lines
    assert "umount=0" not in lines and "lazy=0" not in lines
    assert "the store" not in ran.stdout and "cat=1" in lines


def test_the_runtimes_home_config_and_store_are_not_there(make_call):
    call = make_call("# config-secret-sk-9f8e\n")
    config = call.runtime.config
    config.home.mkdir(parents=True, exist_ok=True)
    (config.home / "credentials").write_text("cli-credential-secret")
    ran = sh(
        call,
        f"ls -A {config.home}; cat {config.source}; cat {config.home}/credentials; "
        f"cat {config.store_path}; echo done",
    )
    assert ran.stdout.strip() == "done", ran  # an empty home, an empty config file
    assert "secret" not in ran.stdout + ran.stderr


@pytest.fixture
def visible_dir():
    """A directory a sandboxed program would see (the private /tmp covers ``tmp_path``)."""
    import shutil
    import tempfile

    directory = Path(tempfile.mkdtemp(dir="/srv", prefix="toolang-test-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def test_an_approval_key_kept_outside_the_home_is_hidden_too(make_call, visible_dir):
    seen = visible_dir / "seen"
    seen.write_text("visible")
    key = visible_dir / "approval.key"
    key.write_text("approval-key-secret")
    call = make_call(f'[approvals]\nkey_file = "{key}"\n')
    assert call.runtime.config.approval_key_path == key
    key.chmod(0o644)  # readable to anyone: only the sandbox keeps the program out
    ran = sh(call, f"cat {seen}; echo; cat {key}; echo done")
    assert ran.stdout.split() == ["visible", "done"], ran
    assert "secret" not in ran.stdout + ran.stderr


def test_a_plugin_database_kept_outside_the_home_is_hidden_too(make_call, visible_dir):
    """A plugin's own database where its settings put it (``[plugins.memory-sqlite]
    path``, outside the home): every owner's data, hidden with its log like the store."""
    from sqlite_utils import Migrations

    from toolang_core import open_plugin_database

    seen = visible_dir / "seen"
    seen.write_text("visible")
    migrations = Migrations("bench-notes")

    @migrations()
    def m001(db):
        db["notes"].insert({"text": "another-owners-secret"})

    database = visible_dir / "data" / "notes.db"
    database.parent.mkdir()
    db = open_plugin_database(database, migrations)
    try:
        db["notes"].insert({"text": "more-of-the-secret"})  # in the log, not yet the file
        files = [database, Path(f"{database}-wal"), Path(f"{database}-shm")]
        assert all(path.exists() for path in files)
        for path in files:
            path.chmod(0o644)  # readable to anyone: only the sandbox keeps the program out
        ran = sh(make_call(), f"cat {seen}; echo; cat {' '.join(map(str, files))}; echo done")
    finally:
        db.close()
    assert ran.stdout.split() == ["visible", "done"], ran
    assert "secret" not in ran.stdout + ran.stderr


def test_a_file_a_plugin_names_is_hidden_before_it_is_ever_opened(make_call, visible_dir):
    """A plugin's file outside the home that it opens only later (memory-sqlite's, on
    the first recall), named with hide_from_tools when the plugin is built: hidden
    from the next program on, as are a sink and a key that are no database."""
    from toolang_core import hide_from_tools

    files = [visible_dir / "memory.db", visible_dir / "events.jsonl", visible_dir / "vault.key"]
    for path in files:
        path.write_text(f"{path.name}-secret")  # what an earlier run left
        path.chmod(0o644)
    hide_from_tools(*files)
    ran = sh(make_call(), f"cat {' '.join(map(str, files))}; echo done")
    assert ran.stdout.split() == ["done"], ran
    assert "secret" not in ran.stdout + ran.stderr


def test_only_the_working_directory_and_a_private_tmp_are_writable(make_call):
    call = make_call()
    beside = call.runtime.config.base_dir / "dropped"  # under /tmp here: the private one's
    venv = Path(sys.prefix) / "dropped"
    ran = sh(
        call,
        f"touch in-workdir && echo workdir=ok; touch /tmp/x && echo tmp=ok; "
        f"touch {beside}; touch {venv}; echo venv=$?; touch /usr/x; echo usr=$?",
    )
    assert "workdir=ok" in ran.stdout and "tmp=ok" in ran.stdout
    assert "venv=1" in ran.stdout and "usr=1" in ran.stdout
    assert "Read-only file system" in ran.stderr
    assert (workdir_of(call) / "in-workdir").exists()
    assert not beside.exists() and not venv.exists()  # nothing reached the machine


def test_the_users_secrets_are_hidden(make_call):
    places = (Path.home() / ".ssh", Path.home() / ".config", Path("/run"))
    ran = sh(make_call(), "; ".join(f"ls -A {p} | wc -l" for p in places))
    assert ran.stdout.split() == ["0", "0", "0"], ran


def test_the_runtimes_environment_is_not_in_any_proc_the_program_can_read(make_call, monkeypatch):
    monkeypatch.setenv("TOOLANG_TEST_SECRET", "sk-runtime-environ-secret")
    ran = sh(
        make_call(),
        "cat /proc/$PPID/environ /proc/1/environ; for p in /proc/[0-9]*; do "
        "cat $p/environ; done; echo; echo ppid=$PPID; ls /proc | grep -c '^[0-9]'",
    )
    assert "sk-runtime-environ-secret" not in ran.stdout
    assert "TOOLANG_TOOL_CALL=t-1:c-1" in ran.stdout  # its own environment, nothing more
    assert "ppid=1" in ran.stdout  # its parent is the sandbox's init
    assert int(ran.stdout.split()[-1]) < 10  # its own few processes, not the machine's


def test_another_owners_work_is_not_there(make_call):
    ada = make_call(owner="ada")
    mallory = make_call(owner="mallory")
    (workdir_of(ada) / "plans.txt").write_text("ada's plans")
    root = workdir_of(ada).parent.parent
    ran = sh(mallory, f"pwd; ls -A {root} {root}/owners; cat {workdir_of(ada)}/plans.txt")
    assert ran.stdout.splitlines()[0] == str(workdir_of(mallory))
    assert "plans" not in ran.stdout and "ada" not in ran.stdout.splitlines()[1:]
    operator = sh(make_call(), f"ls -A {root}/owners; cat {workdir_of(ada)}/plans.txt")
    assert "plans" not in operator.stdout  # the operator's programs see no owner's either


# -- stopping it ------------------------------------------------------------------------


def test_a_canceled_call_stops_a_daemon_that_left_its_session(make_call):
    call = make_call()
    directory = workdir_of(call)

    async def cancel_when_beating() -> None:
        task = asyncio.create_task(
            run_tool_process(
                ["/bin/sh", "-c", DAEMON + "sleep 30"], context=call, kill_grace_seconds=0.5
            )
        )
        while beats(directory) < 3:
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_when_beating())
    assert_no_more_beats(directory)


def test_the_time_limit_stops_a_daemon_too(make_call):
    call = make_call()
    ran = sh(call, DAEMON + "while [ ! -s beat ]; do sleep 0.01; done; sleep 30", timeout_seconds=1)
    assert ran.timed_out
    assert_no_more_beats(workdir_of(call))


def test_a_program_that_ended_leaves_nothing_running(make_call):
    call = make_call()
    ran = sh(call, DAEMON + "while [ ! -s beat ]; do sleep 0.01; done; echo leaving")
    assert (ran.exit_code, ran.stdout) == (0, "leaving\n")
    assert_no_more_beats(workdir_of(call))


def test_the_ledger_stops_a_sandbox_left_by_a_runtime_that_died(make_call, tmp_path):
    """A sandbox whose runtime is gone and that nothing killed (its bubblewrap started
    without PR_SET_PDEATHSIG here): the next start's sweep kills it whole."""
    call = make_call()
    policy = policy_for(call)
    found = sandbox_support()
    assert found.bwrap is not None
    argv = bwrap_argv(
        found.bwrap,
        policy,
        ["/bin/sh", "-c", DAEMON + "sleep 300"],
        hidden=policy.hidden,
        cwd=policy.workdir,
    )
    marker = "t-dead:c-1"
    sandbox = subprocess.Popen(
        argv, env={"PATH": os.environ["PATH"], "TOOLANG_TOOL_CALL": marker}, start_new_session=True
    )
    try:
        wait_for(lambda: beats(policy.workdir) >= 3, 30, "the daemon's heartbeat")
        path = process_ledger.note_started(tmp_path, sandbox.pid, marker)
        assert path is not None
        raw = json.loads(path.read_text())
        dead = subprocess.Popen(["true"])
        dead.wait()
        raw["owner"] = {"pid": dead.pid, "start_ticks": 1}
        path.write_text(json.dumps(raw))

        (stopped,) = process_ledger.stop_orphaned(tmp_path)
        assert stopped.outcome == "killed"
        sandbox.wait(timeout=10)
        assert_no_more_beats(policy.workdir)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sandbox.pid, signal.SIGKILL)
        sandbox.wait(timeout=10)
    assert ProcessIdentity.of(sandbox.pid) is None


# -- limits -----------------------------------------------------------------------------


FORKS = """
import os, time
started = 0
for _ in range(30):
    try:
        if os.fork() == 0:
            time.sleep(5)
            os._exit(0)
    except OSError as exc:
        print("refused:", exc.strerror)
        break
    started += 1
print("started", started)
"""


def test_the_process_limit_holds_whoever_runs_the_runtime(make_call):
    call = make_call("[tools]\nmax_processes = 6\n")
    ran = sh(call, f"exec python3 -c '{FORKS}'")
    assert "refused: Resource temporarily unavailable" in ran.stdout, ran
    started = int(ran.stdout.split()[-1])
    assert 0 < started < 6, ran  # python itself is one of the six


def test_a_file_past_the_size_limit_is_cut(make_call):
    call = make_call("[tools]\nfile_size_mb = 1\n")
    ran = sh(call, "head -c 3000000 /dev/zero > big; echo status=$?")
    assert "status=0" not in ran.stdout
    assert (workdir_of(call) / "big").stat().st_size <= 1024 * 1024


def test_the_address_space_limit_stops_a_large_allocation(make_call):
    call = make_call("[tools]\naddress_space_mb = 256\n")
    ran = sh(call, "python3 -c 'bytearray(1024 * 1024 * 1024)'; echo status=$?")
    assert "MemoryError" in ran.stderr and "status=1" in ran.stdout, ran


def test_cpu_seconds_end_a_busy_program(make_call):
    ran = sh(make_call("[tools]\ncpu_seconds = 1\n"), "while :; do :; done")
    assert ran.exit_code not in (0, None) and not ran.timed_out, ran


# -- network ----------------------------------------------------------------------------


def test_there_is_no_network_by_default(make_call):
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    with listener:
        ran = sh(
            make_call(),
            f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3)\"; "
            "echo status=$?; cat /proc/net/dev | grep -c ':'",
        )
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody ever came
    assert "status=1" in ran.stdout and "Connection refused" in ran.stderr
    assert ran.stdout.split()[-1] == "1"  # loopback is its only interface


# -- where there is none ----------------------------------------------------------------


def test_a_required_sandbox_that_is_missing_refuses_and_names_what_to_install(
    make_call, monkeypatch
):
    missing = SandboxSupport(f"bubblewrap (bwrap) is not installed: {support_module.INSTALL_HINT}")
    monkeypatch.setattr("toolang_core.sandbox.launch.support", _returning(missing))
    call = make_call()
    with pytest.raises(SandboxError) as refused:
        sh(call, "touch ran")
    assert "apt-get install bubblewrap" in str(refused.value)
    assert 'sandbox = "required"' in str(refused.value)
    assert not (workdir_of(call) / "ran").exists()


def test_a_program_asked_to_start_in_a_hidden_place_is_refused(make_call):
    call = make_call()
    home = call.runtime.config.home
    home.mkdir(parents=True, exist_ok=True)
    with pytest.raises(SandboxError, match="do not see"):
        sh(call, "true", cwd=home)


def _returning(value: SandboxSupport):
    async def support() -> SandboxSupport:
        return value

    return support


def test_with_the_sandbox_off_a_program_runs_unconfined(make_call):
    call = make_call('[tools]\nsandbox = "off"\n')
    home = call.runtime.config.home
    home.mkdir(parents=True, exist_ok=True)
    (home / "visible").write_text("x")
    ran = sh(call, f"ls {home}; grep CapEff /proc/self/status")
    assert "visible" in ran.stdout
    assert attrs.evolve(sandbox_support()).available  # it was there; it was not used


def test_the_start_up_sweep_empties_and_removes_cgroups_of_a_runtime_that_died():
    from toolang_core.sandbox import cgroup

    mode = cgroup.process_limit_mode()
    if mode.kind != "cgroup" or mode.parent is None:
        pytest.skip(f"no pids cgroup in use here ({mode.describe()})")
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = mode.parent / f"{cgroup.PREFIX}{dead.pid}-1"
    left.mkdir()
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        (left / "cgroup.procs").write_text(str(sleeper.pid))  # a sandbox's process, left
        mine = cgroup.create(5)  # this runtime's own, in use: left alone
        assert mine is not None
        # ours, and any other runtime's that died (tests run side by side share the parent;
        # a killed runtime's waiting bubblewraps leave theirs)
        assert cgroup.sweep() >= 1
        assert sleeper.wait(timeout=10) == -signal.SIGKILL  # killed, and reaped here
        cgroup.sweep()  # the next start (or this one, once its processes are reaped)
        assert not left.exists()
        assert mine.exists()
        mine.rmdir()
    finally:
        with contextlib.suppress(ProcessLookupError):
            sleeper.kill()
        sleeper.wait(timeout=10)
        with contextlib.suppress(OSError):
            left.rmdir()
