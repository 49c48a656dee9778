"""Long-lived programs in the tool sandbox (toolang_core.open_tool_process): spoken to
through real pipes, in real bubblewrap sandboxes — what they cannot see or reach, and
that they end with their block and with a runtime that is SIGKILLed (Linux)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from toolang_core import OpenToolProcess, SandboxError, open_tool_process
from toolang_core.sandbox.members import sandbox_processes
from toolang_core.sandbox.policy import workdir_root
from toolang_core.sandbox.support import sandbox_support
from toolang_core.testing.processes import wait_for

pytestmark = pytest.mark.skipif(
    not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().problem}"
)

# Runs each line it reads as a shell command and answers with what it printed, then a
# line "end <status>": a program that lives between requests.
SHELL_SERVER = textwrap.dedent(
    """
    import subprocess, sys
    for line in sys.stdin:
        ran = subprocess.run(line, shell=True, capture_output=True, text=True)
        sys.stdout.write(ran.stdout + ran.stderr + f"end {ran.returncode}\\n")
        sys.stdout.flush()
    """
)


async def ask(program, command: str) -> str:
    """Send one command to SHELL_SERVER; return what it printed (``end`` line too)."""
    program.stdin.write(command.encode() + b"\n")
    await program.stdin.drain()
    lines = []
    while not re.search(r"end -?\d+\n$", line := (await program.stdout.readline()).decode()):
        assert line, "the program ended"
        lines.append(line)
    return "".join(lines) + line


def server_argv() -> list[str]:
    return [sys.executable, "-c", SHELL_SERVER]


@pytest.fixture
def runtime(toolang_runtime):
    made = toolang_runtime("# config-secret-sk-9f8e\n")
    made.config.home.mkdir(parents=True, exist_ok=True)
    (made.config.home / "credentials").write_text("cli-credential-secret")
    return made


def test_it_is_spoken_to_through_pipes_and_sees_only_its_view(runtime, tmp_path):
    shown = tmp_path / "shown"
    shown.mkdir()
    (shown / "data").write_text("readable\n")
    secret = tmp_path / "not-shown"
    secret.write_text("private")

    async def main() -> tuple[list[str], int | None]:
        async with open_tool_process(server_argv(), runtime=runtime, read_only=[shown]) as p:
            assert p.sandboxed
            answers = [
                await ask(p, f"cat {shown}/data"),
                await ask(p, f"echo x > {shown}/data"),
                await ask(p, f"cat {secret}"),
                await ask(p, "echo hi > written; cat written"),
            ]
        return answers, p.returncode

    answers, code = asyncio.run(main())
    assert answers[0] == "readable\nend 0\n"
    assert "Read-only file system" in answers[1], answers[1]
    assert "No such file" in answers[2], answers[2]  # a private /tmp: tmp_path is not there
    assert answers[3] == "hi\nend 0\n"  # its working directory is writable
    assert code is not None  # stopped and reaped with its block
    assert (shown / "data").read_text() == "readable\n"


def test_a_writable_place_is_writable_and_what_is_hidden_inside_stays_hidden(runtime, tmp_path):
    config = runtime.config
    assert tmp_path in config.home.parents  # the place holds the runtime's home
    place = tmp_path / "place"
    place.mkdir()

    root = workdir_root(SimpleNamespace(runtime=runtime))  # type: ignore[arg-type]
    assert tmp_path in root.parents  # hidden (tools' work), inside the place
    workdir = root / "servers" / "one"  # shown: its own work
    workdir.mkdir(parents=True)
    (root / "other-work").write_text("another agent's")

    async def main() -> list[str]:
        async with open_tool_process(
            server_argv(), runtime=runtime, writable=[tmp_path], workdir=workdir
        ) as p:
            return [
                await ask(p, f"echo new > {place}/file"),
                await ask(p, f"cat {config.home}/credentials; ls -A {config.home}"),
                await ask(p, f"cat {config.source}"),
                await ask(p, "echo here > here; cat here"),  # its workdir, in the place
                await ask(p, f"ls {root}"),
            ]

    wrote, credentials, source, here, others = asyncio.run(main())
    assert here == "here\nend 0\n", here
    assert (workdir / "here").read_text() == "here\n"
    assert others == "servers\nend 0\n", others  # the way to its own; the rest hidden
    assert wrote == "end 0\n"
    assert (place / "file").read_text() == "new\n"
    assert "secret" not in credentials and "No such file" in credentials, credentials
    assert "config-secret" not in source and source.endswith(("end 0\n", "end 1\n")), source


def test_a_place_inside_what_is_hidden_is_refused(runtime):
    async def main() -> None:
        async with open_tool_process(
            server_argv(), runtime=runtime, read_only=[runtime.config.home]
        ):
            raise AssertionError("started")

    with pytest.raises(SandboxError, match="never see"):
        asyncio.run(main())


@pytest.mark.parametrize("network", ["off", None])
def test_no_network_unless_allowed(runtime, network):
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    probe = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3)\""

    async def main() -> str:
        async with open_tool_process(server_argv(), runtime=runtime, network=network) as p:
            assert p.policy.network == "off"
            return await ask(p, probe)

    try:
        answer = asyncio.run(main())
    finally:
        listener.close()
    assert "Connection refused" in answer and answer.endswith("end 1\n"), answer


def test_network_allow_goes_through_the_proxy_only(runtime):
    async def main() -> str:
        async with open_tool_process(
            server_argv(), runtime=runtime, network="allow", allow_hosts=["example.org"]
        ) as p:
            assert p.policy.network == "allow"
            return await ask(p, "echo $HTTP_PROXY")

    assert asyncio.run(main()) == "http://127.0.0.1:3128\nend 0\n"


def test_the_end_of_the_block_stops_a_program_that_will_not_end(runtime):
    stubborn = [
        "/bin/sh",
        "-c",
        "trap '' TERM; exec 0<&-; (trap '' TERM; sleep 600) & while :; do sleep 1; done",
    ]

    async def main() -> int | None:
        async with open_tool_process(stubborn, runtime=runtime, kill_grace_seconds=0.2) as p:
            pid = p.pid
            wait_for(lambda: len(sandbox_processes(pid).members) >= 2, what="its processes")
        return p.returncode

    assert asyncio.run(main()) is not None


RUNTIME = textwrap.dedent(
    """
    import asyncio, sys
    from toolang_core import open_tool_process

    async def main():
        argv = ["/bin/sh", "-c", "sleep 600 & while :; do sleep 0.05; done"]
        async with open_tool_process(argv, workdir=sys.argv[1]) as program:
            print(program.pid, flush=True)
            await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def test_it_dies_with_a_sigkilled_runtime(tmp_path):
    workdir = tmp_path / "work"
    workdir.mkdir()
    runtime = subprocess.Popen(
        [sys.executable, "-c", RUNTIME, str(workdir)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TOOLANG_HOME": str(tmp_path / "home")},
    )
    try:
        assert runtime.stdout is not None
        bwrap = int(runtime.stdout.readline())
        inside = wait_for(lambda: _members(bwrap), what="the program and its child")
        runtime.send_signal(signal.SIGKILL)
        runtime.wait(timeout=60)
        everything = [bwrap, *inside]
        wait_for(lambda: not any(map(alive, everything)), what="the sandbox to end")
    finally:
        if runtime.poll() is None:
            runtime.kill()
            runtime.wait()


def _members(bwrap: int) -> list[int] | None:
    found = sandbox_processes(bwrap)
    everything = [*found.inits, *found.members]
    return everything if len(found.members) >= 2 else None


def test_with_the_sandbox_off_it_runs_unconfined_and_still_ends_with_its_block(
    toolang_runtime, tmp_path
):
    runtime = toolang_runtime('[tools]\nsandbox = "off"\n')
    outside = tmp_path / "outside"
    outside.write_text("seen\n")

    async def main() -> tuple[str, OpenToolProcess]:
        async with open_tool_process(server_argv(), runtime=runtime) as p:
            assert not p.sandboxed
            return await ask(p, f"cat {outside}; echo $TOOLANG_TOOL_CALL"), p

    answer, program = asyncio.run(main())
    assert answer == "seen\noutside-a-turn\nend 0\n"
    assert program.returncode is not None
