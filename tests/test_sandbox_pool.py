"""bubblewraps started ahead of the programs they sandbox (toolang_core.sandbox.pool):
real bubblewrap, real processes, real cgroups where the runtime runs as root (Linux).

What waits holds nothing of any call and can start nothing; a call's command, arguments
and environment arrive exactly; the pool is emptied when its loop ends or it is closed,
and a runtime killed with bubblewraps waiting leaves nothing running, and no cgroup
after the next start's sweep."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from toolang_core import ToolCall, run_tool_process
from toolang_core.sandbox import cgroup, pool
from toolang_core.sandbox.support import sandbox_support
from toolang_core.testing.processes import wait_for

pytestmark = pytest.mark.skipif(
    not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().problem}"
)

ROOT_CGROUPS = cgroup.process_limit_mode().kind == "cgroup"


@pytest.fixture
def call(toolang_runtime, toolang_call_context):
    return toolang_call_context(
        call=ToolCall("c-1", "exec_run"), turn_id="t-1", runtime=toolang_runtime()
    )


def the_pool() -> pool.Pool:
    found = sandbox_support().bwrap
    assert found is not None
    return pool.pool_for(found)


async def all_waiting(expected: int = pool.SIZE) -> tuple[pool.Waiting, ...]:
    """The pool's bubblewraps once ``expected`` of them wait (started in the background)."""
    deadline = asyncio.get_running_loop().time() + 60
    while len(the_pool().waiting) < expected:
        assert asyncio.get_running_loop().time() < deadline, "no bubblewrap came to wait"
        await asyncio.sleep(0.02)
    return the_pool().waiting


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_what_waits_holds_nothing_of_a_call_and_can_start_nothing(call, monkeypatch):
    monkeypatch.setenv("TOOLANG_TEST_SECRET", "sk-pool-secret")

    async def look() -> list[dict[str, object]]:
        await run_tool_process(["/bin/true"], context=call)
        seen = []
        for entry in await all_waiting():
            pid = entry.popen.pid
            seen.append(
                {
                    "environ": Path(f"/proc/{pid}/environ").read_bytes(),
                    "cmdline": Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"),
                    "pids.max": (
                        (entry.group / "pids.max").read_text().strip() if entry.group else None
                    ),
                    "in group": (
                        (entry.group / "cgroup.procs").read_text().split() if entry.group else None
                    ),
                    "pid": pid,
                }
            )
        return seen

    for seen in asyncio.run(look()):
        assert seen["environ"] == b""  # the sandbox's PID 1 shows this: nothing
        cmdline = seen["cmdline"]
        assert isinstance(cmdline, list)
        assert cmdline[1] == b"--args" and b"sk-pool-secret" not in b" ".join(cmdline)
        if ROOT_CGROUPS:  # alone in its cgroup, which lets it fork nothing
            assert seen["pids.max"] == "1"
            assert seen["in group"] == [str(seen["pid"])]


def test_a_commands_arguments_and_environment_arrive_exactly(call):
    awkward = ["a b", "it's", '"quoted"', "$HOME", "`id`", "new\nline", "ünï", "-", "--", ""]
    ran = asyncio.run(
        run_tool_process(
            ["/bin/sh", "-c", 'printf "<%s>" "$@"; echo; env', "sh", *awkward],
            context=call,
            env={"PATH": os.environ["PATH"], "ODD": "x y 'z' $w"},
        )
    )
    assert ran.stdout.startswith("".join(f"<{a}>" for a in awkward)), ran
    assert "ODD=x y 'z' $w" in ran.stdout
    assert "TOOLANG_TOOL_CALL=t-1:c-1" in ran.stdout


def test_a_long_command_arrives_whole_with_nothing_else_open(call):
    many = [f"argument-{i:06d}-" + "x" * 40 for i in range(6000)]  # ~330 KB in all
    ran = asyncio.run(
        run_tool_process(
            ["/bin/sh", "-c", 'echo "$#" "$1" "${6000}"; ls /proc/self/fd', "sh", *many],
            context=call,
        )
    )
    lines = ran.stdout.splitlines()
    assert lines[0] == f"6000 {many[0]} {many[-1]}", ran
    assert sorted(lines[1:]) == ["0", "1", "2", "3"]  # 3: ls's own listing
    stdin = asyncio.run(
        run_tool_process(["/bin/sh", "-c", "readlink /proc/self/fd/0"], context=call)
    )
    assert stdin.stdout == "/dev/null\n"


def test_the_end_of_the_loop_kills_what_waits_and_removes_its_cgroups(call):
    async def use() -> list[tuple[int, Path | None]]:
        await run_tool_process(["/bin/true"], context=call)
        return [(e.popen.pid, e.group) for e in await all_waiting()]

    waited = asyncio.run(use())
    assert len(waited) == pool.SIZE
    for pid, group in waited:
        assert not alive(pid)
        if ROOT_CGROUPS:
            assert group is not None and not group.exists()
    assert not pool._pools  # the loop's pool is gone with it


def waiting_children() -> list[int]:
    """This process's children that are bubblewraps waiting for their options."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
            mine = fields[1] == str(os.getpid()) and fields[0] != "Z"
            if mine and b"--args" in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, IndexError):
            continue
    return found


def test_the_end_of_the_loop_while_bubblewraps_start_leaves_none_waiting(call):
    before = waiting_children()
    for _ in range(3):  # the loop ends while the next ones start (the call returned)
        asyncio.run(run_tool_process(["/bin/true"], context=call))
    assert waiting_children() == before


def test_close_empties_the_pool_and_a_later_call_starts_anew(call):
    async def use() -> None:
        await run_tool_process(["/bin/true"], context=call)
        before = await all_waiting()
        await pool.close()
        for entry in before:
            assert entry.popen.returncode is not None
            assert entry.group is None or not entry.group.exists()
        assert not pool._pools
        ran = await run_tool_process(["/bin/sh", "-c", "echo again"], context=call)
        assert ran.stdout == "again\n"
        await all_waiting()

    asyncio.run(use())


def test_calls_at_once_beyond_those_waiting_start_their_own(call):
    async def many() -> list[str]:
        await run_tool_process(["/bin/true"], context=call)
        await all_waiting()
        runs = [
            run_tool_process(["/bin/sh", "-c", "echo $$ $(hostname)"], context=call)
            for _ in range(pool.SIZE + 2)
        ]
        return [ran.stdout for ran in await asyncio.gather(*runs)]

    said = asyncio.run(many())
    assert said == ["2 toolang-sandbox\n"] * (pool.SIZE + 2)  # each its own PID namespace


def test_a_bubblewrap_killed_while_it_waited_is_replaced(call):
    async def use() -> str:
        await run_tool_process(["/bin/true"], context=call)
        for entry in await all_waiting():
            entry.popen.kill()
            await pool.exited(entry.popen)
        ran = await run_tool_process(["/bin/sh", "-c", "echo fine"], context=call)
        return ran.stdout

    assert asyncio.run(use()) == "fine\n"


RUNTIME = """
import asyncio, json, sys
from toolang_core import ToolCall, run_tool_process
from toolang_core.config import ToolangConfig
from toolang_core.runtime import Runtime
from toolang_core.sandbox import pool
from toolang_core.sandbox.support import sandbox_support
from toolang_core.testing.runtimes import tool_call_context
from pathlib import Path

async def main():
    base = Path(sys.argv[1])
    runtime = Runtime.with_plugins(ToolangConfig(base_dir=base, home=base / ".toolang"), [], env={})
    call = tool_call_context(runtime, "exec_run", call=ToolCall("c-1", "exec_run", {}))
    await run_tool_process(["/bin/true"], context=call)
    found = pool.pool_for(sandbox_support().bwrap)
    while len(found.waiting) < pool.SIZE:
        await asyncio.sleep(0.02)
    waiting = [[e.popen.pid, str(e.group) if e.group else None] for e in found.waiting]
    print(json.dumps(waiting), flush=True)
    await asyncio.sleep(300)

asyncio.run(main())
"""


def test_a_runtime_killed_with_bubblewraps_waiting_leaves_nothing_behind(tmp_path):
    runtime = subprocess.Popen(
        [sys.executable, "-c", RUNTIME, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert runtime.stdout is not None
        waiting = json.loads(runtime.stdout.readline())
        assert len(waiting) == pool.SIZE
        assert all(alive(pid) for pid, _ in waiting)
    finally:
        runtime.send_signal(signal.SIGKILL)
        runtime.wait(timeout=30)
    # they die with it (PR_SET_PDEATHSIG), having run nothing
    wait_for(lambda: not any(alive(pid) for pid, _ in waiting), 30, "the waiting bubblewraps")
    if ROOT_CGROUPS:
        groups = [Path(group) for _, group in waiting]
        assert all(group.exists() for group in groups)  # left by the dead runtime
        gone = lambda: cgroup.sweep() >= 0 and not any(group.exists() for group in groups)  # noqa: E731
        wait_for(gone, 30, "the next start's sweep to remove the dead runtime's cgroups")


def test_the_runtimes_shutdown_kills_what_waits(toolang_runtime, toolang_call_context):
    runtime = toolang_runtime()
    call = toolang_call_context(call=ToolCall("c-1", "exec_run"), runtime=runtime)

    async def serve_once() -> tuple[pool.Waiting, ...]:
        await run_tool_process(["/bin/true"], context=call)
        waiting = await all_waiting()
        await runtime.serve(asyncio.Event(), until_idle=True, sources=())
        assert not pool._pools  # still in the loop: the shutdown emptied it
        return waiting

    for entry in asyncio.run(serve_once()):
        assert entry.popen.returncode is not None
        assert entry.group is None or not entry.group.exists()


def test_a_call_that_fails_after_taking_a_bubblewrap_leaves_none_waiting(call):
    before = waiting_children()

    async def fail() -> None:
        await run_tool_process(["/bin/true"], context=call)
        await all_waiting()
        with pytest.raises(TypeError):  # not an environment: found as it is handed over
            await run_tool_process(["/bin/true"], context=call, env={"X": 1})  # type: ignore[dict-item]

    asyncio.run(fail())
    assert waiting_children() == before


LOOPS_ENDING = """
import asyncio, sys
from toolang_core import ToolCall, run_tool_process
from toolang_core.config import ToolangConfig
from toolang_core.runtime import Runtime
from toolang_core.testing.runtimes import tool_call_context
from pathlib import Path

base = Path(sys.argv[1])
runtime = Runtime.with_plugins(ToolangConfig(base_dir=base, home=base / ".toolang"), [], env={})
call = tool_call_context(runtime, "exec_run", call=ToolCall("c-1", "exec_run", {}))

async def end_early(steps):
    for _ in range(2):  # two calls at once: one takes what waits, one starts its own
        asyncio.create_task(run_tool_process(["/bin/sh", "-c", "sleep 30 & wait"], context=call))
    for _ in range(steps):
        await asyncio.sleep(0)
    # the loop ends here: asyncio.run cancels every task at once, asyncio's own too

for steps in range(int(sys.argv[2])):
    asyncio.run(end_early(steps % 12))
    print(steps, flush=True)
"""


def test_a_loop_that_ends_while_bubblewraps_start_ends(tmp_path):
    # asyncio.run's end cancels every task at once, asyncio's own among them; a
    # bubblewrap started with asyncio's pipes just then was never seen to end, and the
    # loop's end waited for it for ever (CPython 3.11). Many loops, each ending at
    # another point of the calls' and the keeper's starts.
    loops = 80
    ending = subprocess.Popen(
        [sys.executable, "-c", LOOPS_ENDING, str(tmp_path), str(loops)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    out = ending.stdout
    assert out is not None
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in out:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        for done in range(loops):
            try:  # a hang, not slowness: each loop takes milliseconds, a minute is plenty
                lines.get(timeout=60)
            except queue.Empty:
                pytest.fail(f"a loop's end hung after {done} of {loops} loops")
        ending.wait(timeout=60)
    finally:
        if ending.poll() is None:
            ending.kill()
            ending.wait()
    assert ending.returncode == 0
