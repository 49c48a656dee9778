"""Processes tools start (toolang_core.tools.process): their environment, their marker,
and stopping their whole process group — with real processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolang_core import (
    TOOL_CALL_ENV,
    ToolCall,
    run_tool_process,
    started_by_tool,
    tool_process_env,
)
from toolang_core.testing.processes import wait_for


@pytest.fixture
def ctx(toolang_call_context):
    return toolang_call_context(
        call=ToolCall("c-7", "exec_run"), turn_id="t-1", thread_id="x", run_id="r"
    )


@pytest.fixture
def unsandboxed(toolang_call_context, toolang_runtime):
    """A call whose program runs unconfined ([tools] sandbox = "off"): its process group
    is what stopping it must reach (a sandbox's: tests/test_sandbox_process.py)."""
    runtime = toolang_runtime('[tools]\nsandbox = "off"\n')
    return toolang_call_context(
        call=ToolCall("c-7", "exec_run"), turn_id="t-1", thread_id="x", run_id="r", runtime=runtime
    )


def test_the_environment_is_the_allow_list_plus_explicit_values_plus_the_marker(ctx):
    base = {"PATH": "/bin", "LC_ALL": "C", "OPENAI_API_KEY": "sk-secret", "HOME": "/h"}
    env = tool_process_env(ctx, allow=("PATH", "LC_*"), extra={"MODE": "x"}, base=base)
    assert env == {"PATH": "/bin", "LC_ALL": "C", "MODE": "x", TOOL_CALL_ENV: "t-1:c-7"}
    # neither the runtime's environment nor the settings can change or drop the marker
    forged = tool_process_env(ctx, extra={TOOL_CALL_ENV: ""}, base={TOOL_CALL_ENV: "x"})
    assert forged[TOOL_CALL_ENV] == "t-1:c-7"


def test_a_process_sees_only_what_it_is_given(ctx, monkeypatch):
    monkeypatch.setenv("TOOLANG_TEST_SECRET", "do-not-leak")
    ran = asyncio.run(run_tool_process(["/bin/sh", "-c", "env"], context=ctx))
    assert ran.exit_code == 0
    assert "do-not-leak" not in ran.stdout
    assert f"{TOOL_CALL_ENV}=t-1:c-7" in ran.stdout.splitlines()


def test_the_marker_is_found_in_an_ancestor_after_the_process_dropped_it():
    code = "from toolang_core import started_by_tool; print(started_by_tool())"
    env = {**os.environ, TOOL_CALL_ENV: "t-9:c-9"}
    # `env -u` removes the marker from the program's own environment; its parent
    # shell was started with it
    out = subprocess.run(
        ["/bin/sh", "-c", f'env -u {TOOL_CALL_ENV} {sys.executable} -c "{code}"; true'],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "t-9:c-9"
    assert started_by_tool({}) is None  # this test process was not started by a tool


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.mark.parametrize("script", ["sleep 30", "trap '' TERM; sleep 30 & wait; sleep 30"])
def test_a_canceled_call_stops_the_whole_group_within_the_grace(unsandboxed, tmp_path, script):
    """Stopped, not waited for: the script's work (30 s of sleep, then a file) is never
    done — a bound in work, not in seconds, which a busy machine would stretch."""
    pids, done = tmp_path / "pids", tmp_path / "done"

    async def cancel_it() -> None:
        task = asyncio.create_task(
            run_tool_process(
                ["/bin/sh", "-c", f"echo $$ > {pids}; {script}; touch {done}"],
                context=unsandboxed,
                kill_grace_seconds=0.5,
            )
        )
        while not (pids.exists() and pids.read_text().strip()):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_it())
    leader = int(pids.read_text())
    assert not _alive(leader)
    assert not done.exists(), "the canceled script ran to its end"
    with pytest.raises(ProcessLookupError):  # the leader was reaped: no zombie left
        os.kill(leader, 0)


def _marked(marker: str) -> list[int]:
    """Live processes started with ``TOOLANG_TOOL_CALL=<marker>``."""
    wanted = f"{TOOL_CALL_ENV}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _alive(int(entry.name)):
            try:
                if wanted in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_call_canceled_while_its_program_starts_stops_the_whole_group(
    toolang_call_context, tmp_path
):
    ctx = toolang_call_context(call=ToolCall("c-start", "exec_run"), turn_id="t-race")

    async def cancel_at_once() -> None:
        task = asyncio.create_task(
            run_tool_process(["/bin/sh", "-c", "sleep 30 & wait"], context=ctx)
        )
        await asyncio.sleep(0)  # it has begun to start the program, not finished
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_at_once())
    wait_for(lambda: not _marked("t-race:c-start"), 60, "the program's group to be gone")
