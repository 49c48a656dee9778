"""The ledger of tool programs (toolang_core.tools.process_ledger): written while a
program runs, and what a start-up sweep kills — only groups whose identity still matches
and whose runtime is gone. Real processes throughout (Linux: /proc)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from toolang_core import TOOL_CALL_ENV, Tool, ToolCall, hookimpl, run_tool_process
from toolang_core.config import ToolangConfig
from toolang_core.config.model import ModelsConfig, RuntimeConfig
from toolang_core.runtime import Runtime
from toolang_core.store.types import TurnStatus
from toolang_core.testing.models import ScriptedModel, text, tool_call
from toolang_core.testing.processes import wait_for
from toolang_core.testing.runtimes import crashed_with_intent
from toolang_core.tools import process_ledger
from toolang_core.tools.process_ledger import ProcessIdentity

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")

MARKER = "t-1:c-7"


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def dead_process() -> ProcessIdentity:
    """The identity of a process that ran and is gone (a runtime that died)."""
    proc = subprocess.Popen(["sleep", "30"])
    identity = ProcessIdentity.of(proc.pid)
    assert identity is not None
    proc.kill()
    proc.wait()
    return identity


@pytest.fixture
def group() -> Iterator[subprocess.Popen[bytes]]:
    """A detached group, as a tool's program left behind: a shell leader and a child,
    both carrying the call's marker."""
    env = {**os.environ, TOOL_CALL_ENV: MARKER}
    proc = subprocess.Popen(["/bin/sh", "-c", "sleep 30 & wait"], env=env, start_new_session=True)
    wait_for(lambda: process_ledger._members(proc.pid, MARKER), 10, "the shell's child")
    yield proc
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def write_entry(home: Path, group_pid: int, owner: ProcessIdentity, **changes: object) -> Path:
    path = process_ledger.note_started(home, group_pid, MARKER)
    assert path is not None
    raw = json.loads(path.read_text())
    raw["owner"] = attrs.asdict(owner)
    raw.update(changes)
    path.write_text(json.dumps(raw))
    return path


def test_a_running_program_is_written_down_until_it_is_reaped(toolang_call_context, tmp_path):
    ctx = toolang_call_context(call=ToolCall("c-7", "exec_run"), turn_id="t-1")
    ledger = process_ledger.ledger_dir(ctx.runtime.config.home)

    async def run() -> list[dict[str, object]]:
        task = asyncio.create_task(run_tool_process(["sleep", "0.5"], context=ctx))
        while not (entries := list(ledger.glob("*.json"))):
            await asyncio.sleep(0.01)
        written = [json.loads(e.read_text()) for e in entries]
        await task
        return written

    (entry,) = asyncio.run(run())
    assert entry["marker"] == MARKER
    assert entry["owner"] == attrs.asdict(ProcessIdentity.of(os.getpid()))
    assert list(ledger.glob("*")) == []  # dropped once the program was reaped


def test_a_program_started_by_a_runtime_that_died_is_killed_with_its_whole_group(tmp_path, group):
    path = write_entry(tmp_path, group.pid, dead_process())
    (stopped,) = process_ledger.stop_orphaned(tmp_path)
    assert (stopped.outcome, stopped.entry.marker, stopped.entry.call_key) == (
        "killed",
        MARKER,
        MARKER,
    )
    group.wait(timeout=10)  # its leader was killed too
    assert not path.exists()


def test_members_left_by_a_dead_leader_are_found_by_the_marker_and_killed(tmp_path):
    env = {**os.environ, TOOL_CALL_ENV: MARKER}
    leader = subprocess.Popen(
        ["/bin/sh", "-c", "sleep 30 & echo $!"],
        env=env,
        start_new_session=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert leader.stdout is not None
    child = int(leader.stdout.readline())
    path = write_entry(tmp_path, leader.pid, dead_process())
    leader.wait(timeout=10)  # the leader is gone; its child still runs in its group
    assert alive(child)

    (stopped,) = process_ledger.stop_orphaned(tmp_path)
    assert (stopped.outcome, stopped.members) == ("killed", 1)
    wait_for(lambda: not alive(child), 60, "the child to die")
    assert not path.exists()


def test_a_reused_pid_is_never_killed(tmp_path, group):
    me = ProcessIdentity.of(group.pid)
    assert me is not None
    # the entry's leader started at another time: the pid now belongs to someone else
    path = write_entry(
        tmp_path,
        group.pid,
        dead_process(),
        group={"pid": me.pid, "start_ticks": me.start_ticks - 1},
    )
    (stopped,) = process_ledger.stop_orphaned(tmp_path)
    assert stopped.outcome == "gone"
    assert alive(group.pid)
    assert not path.exists()


def test_the_program_of_a_runtime_still_running_is_left_alone(tmp_path, group):
    runtime = ProcessIdentity.of(os.getpid())
    assert runtime is not None
    path = write_entry(tmp_path, group.pid, runtime)
    assert process_ledger.stop_orphaned(tmp_path) == []
    assert alive(group.pid) and path.exists()


def test_an_entry_from_before_the_machine_restarted_is_dropped_unused(tmp_path, group):
    path = write_entry(tmp_path, group.pid, dead_process(), boot_id="another-boot")
    assert process_ledger.stop_orphaned(tmp_path) == []
    assert alive(group.pid) and not path.exists()


@pytest.mark.parametrize("pid", [0, 1, -1, "7", None])
def test_an_unreadable_entry_is_dropped_and_nothing_is_killed(tmp_path, group, pid):
    ledger = process_ledger.ledger_dir(tmp_path)
    ledger.mkdir()
    (ledger / "1-2.json").write_text("{not json")
    # a group id that would signal this process's own group, init, or everything
    write_entry(tmp_path, group.pid, dead_process(), group={"pid": pid, "start_ticks": 1})
    assert process_ledger.stop_orphaned(tmp_path) == []
    assert alive(group.pid) and list(ledger.iterdir()) == []


def test_the_first_process_of_a_program_dies_with_the_thread_that_started_it(tmp_path):
    """PR_SET_PDEATHSIG, armed by die_with_runtime: a helper process starts a program
    and is killed; the program dies with it."""
    pid_file = tmp_path / "pid"
    code = (
        "import subprocess, sys, time\n"
        "from toolang_core.sandbox.deathsig import die_with_runtime\n"
        "p = subprocess.Popen(['sleep', '30'], preexec_fn=die_with_runtime(),\n"
        "                     start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(60)\n"
    )
    helper = subprocess.Popen([sys.executable, "-c", code])
    try:
        wait_for(lambda: pid_file.exists() and pid_file.read_text(), 30, "the program")
        program = int(pid_file.read_text())
        assert alive(program)
    finally:
        helper.kill()
        helper.wait()
    wait_for(lambda: not alive(program), 60, "the program to die with its parent")


def test_a_leader_that_exited_unreaped_with_no_members_left_is_gone(tmp_path):
    leader = subprocess.Popen(["/bin/sh", "-c", "exit 0"], start_new_session=True)
    path = write_entry(tmp_path, leader.pid, dead_process())
    wait_for(lambda: not alive(leader.pid), 10, "the leader to exit")  # a zombie now
    (stopped,) = process_ledger.stop_orphaned(tmp_path)
    assert (stopped.outcome, stopped.members) == ("gone", 0)
    assert not path.exists()
    leader.wait(timeout=10)


def test_an_entry_of_another_machine_sharing_the_home_is_left_alone(tmp_path, group):
    path = write_entry(tmp_path, group.pid, dead_process(), host="another-machine")
    assert process_ledger.stop_orphaned(tmp_path) == []
    assert alive(group.pid) and path.exists()


# -- through a runtime's start ------------------------------------------------------------


def test_a_start_kills_the_program_of_a_call_in_doubt_and_its_trace_says_so(tmp_path):
    """A runtime died during `send_mail`'s call c1, whose program runs on, detached from
    anything PR_SET_PDEATHSIG reaches; the next start kills it before the turn resumes,
    and the call's in-doubt record (and the model) are told."""

    def send_mail(to: str) -> str:
        """Send a mail.

        :param to: whom to
        """
        raise AssertionError("a call in doubt is not run again")

    class Tools:
        @staticmethod
        @hookimpl
        def toolang_register_tools(register):
            register(Tool.from_function(send_mail, blocking=False))

    model = ScriptedModel([tool_call("send_mail", {"to": "ada"}, call_id="c1"), text("checked")])
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.02, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
    )
    runtime = Runtime.with_plugins(config, [("scripted", model.plugin()), ("t", Tools())], env={})
    turn_id = crashed_with_intent(runtime, "send_mail")
    marker = f"{turn_id}:c1"
    program = subprocess.Popen(
        ["/bin/sh", "-c", "sleep 30 & wait"],
        env={**os.environ, TOOL_CALL_ENV: marker},
        start_new_session=True,
    )
    try:
        path = process_ledger.note_started(config.home, program.pid, marker)
        assert path is not None
        raw = json.loads(path.read_text())
        raw["owner"] = attrs.asdict(dead_process())
        path.write_text(json.dumps(raw))

        async def serve() -> None:
            await runtime.serve(asyncio.Event(), until_idle=True, sources=())

        asyncio.run(serve())
        program.wait(timeout=10)  # killed by the start, not after its 30 s
        wait_for(lambda: not process_ledger._members(program.pid, marker), 60, "its child")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(program.pid, signal.SIGKILL)
        program.wait(timeout=10)

    store = runtime.open_store()
    assert store.get(turn_id).status is TurnStatus.COMPLETED
    (step,) = [s for s in store.steps(turn_id) if s.kind == "tool_call"]
    note = step.data["in_doubt"]["note"]
    assert f"process group {program.pid}) was still running" in note
    assert note in step.data["result"]["error"]  # the model is told too
    assert store.get_record(process_ledger.STOPPED_KIND, marker) is None  # taken once
    store.close()
