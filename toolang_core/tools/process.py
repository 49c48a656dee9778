"""Processes started by tools: sandboxed, marked, with a chosen environment, stopped
with their turn.

A tool that runs a program must start it with :func:`run_tool_process` — the one place
programs are started, so no tool can skip what follows:

- the program runs in the **OS sandbox** (:mod:`toolang_core.sandbox`: bubblewrap's
  namespaces, a read-only file system with the call's working directory the one
  writable place, the runtime's home, config, store and other owners' work hidden, no
  network unless allowed, resource limits). Where no sandbox is available,
  ``[tools] sandbox = "required"`` (the default) refuses to start it;
  ``sandbox = "off"`` runs it unconfined, as the runtime's user;
- it runs in a **new session** (its own process group; sandboxed, its own PID
  namespace), so stopping it stops everything it started: on a canceled or interrupted
  turn, or at the time limit, it gets ``SIGTERM``, then ``SIGKILL`` after
  ``kill_grace_seconds``, and is reaped before the call returns or the cancellation
  goes on. A sandboxed program's children cannot escape that (``setsid``, double fork:
  they stay in its PID namespace);
- it does not outlive a runtime that is killed: on Linux its first process dies with
  the runtime (``PR_SET_PDEATHSIG``; a sandbox's whole namespace with it), and it is
  written down in the runtime's home until it is reaped, so the next start kills what
  is left of it (:mod:`toolang_core.tools.process_ledger`);
- its environment is built by :func:`tool_process_env`: an **allow-list** of the
  runtime's variables (API keys and other secrets stay out) plus explicit values, and
  the **marker** ``TOOLANG_TOOL_CALL=<turn id>:<call id>``.

The marker is how the runtime tells people from its own tools: deciding an approval
from a process that carries it — or whose ancestors were started with it — is refused
(:func:`started_by_tool`). Behind the sandbox (which hides the store and the runtime's
ports from the program) it is defence in depth; with the sandbox off it is the guard
left against the obvious paths.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import os
import signal
import subprocess
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

import attrs

from toolang_core.sandbox.deathsig import die_with_runtime
from toolang_core.tools import process_ledger

if TYPE_CHECKING:
    from toolang_core.tools.types import ToolCallContext

TOOL_CALL_ENV: Final = "TOOLANG_TOOL_CALL"
"""Set in every process a tool starts: ``<turn id>:<call id>`` of the call."""

DEFAULT_ENV_ALLOW: Final[tuple[str, ...]] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
)
"""The runtime's variables a tool process sees by default (``*`` is a wildcard)."""

_MAX_ANCESTORS: Final = 64


@attrs.frozen
class ToolProcessResult:
    """How a tool's process ended: its exit code (negative: killed by that signal),
    what it wrote (decoded, invalid bytes replaced), and whether the time limit hit."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False


def tool_call_marker(context: ToolCallContext | None) -> str:
    """The marker's value for a call: ``<turn id>:<call id>`` (``outside-a-turn``
    for a tool called by hand, still marked)."""
    turn_id = getattr(context, "turn_id", None)
    if not turn_id:
        return "outside-a-turn"
    return f"{turn_id}:{getattr(context, 'call_id', '')}"


def tool_process_env(
    context: ToolCallContext | None,
    *,
    allow: Iterable[str] = DEFAULT_ENV_ALLOW,
    extra: Mapping[str, str] | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of a process a tool starts.

    The variables of ``base`` (default: this process's environment) whose names match a
    pattern of ``allow`` (``fnmatch``: ``LC_*``), then ``extra`` (explicit values win),
    then the marker :data:`TOOL_CALL_ENV` — which neither ``base`` nor ``extra`` can
    change or remove.
    """
    source = os.environ if base is None else base
    patterns = tuple(allow)
    env = {
        name: value
        for name, value in source.items()
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
    }
    env.update(extra or {})
    env[TOOL_CALL_ENV] = tool_call_marker(context)
    return env


async def run_tool_process(
    argv: Sequence[str],
    *,
    context: ToolCallContext | None,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout_seconds: float | None = None,
    kill_grace_seconds: float = 1.0,
    max_output_bytes: int = 4_000_000,
    workdir: Path | str | None = None,
) -> ToolProcessResult:
    """Run ``argv`` for a tool call and return how it ended.

    The program runs in the OS sandbox the call's policy describes
    (:func:`toolang_core.sandbox.policy.policy_for`: ``[tools]``, the agent's and the
    tool's settings): it sees the file system read-only except ``workdir`` (default: the
    call's working directory, :func:`toolang_core.tool_workdir`), none of the
    runtime's state, no network unless allowed. ``cwd`` (default ``workdir``) is where
    it starts. With ``[tools] sandbox = "off"`` it runs as the runtime's user, unconfined.

    ``env`` defaults to :func:`tool_process_env` ``(context)``; a given ``env`` still
    gets the marker. At ``timeout_seconds`` the program is stopped and the result says
    ``timed_out`` (with what was written until then). When the awaiting task is
    canceled — its turn was canceled, interrupted or is shutting down — the program
    and everything it started is stopped and reaped, then the cancellation goes on:
    nothing the program did after it is returned. Output past ``max_output_bytes`` per
    stream is read and dropped.

    :raises toolang_core.SandboxError: when the sandbox is required and not available
        here (the message says what to install), or ``cwd`` is hidden from the program.
    """
    from toolang_core.sandbox.policy import policy_for

    marker = tool_call_marker(context)
    environment = dict(tool_process_env(context) if env is None else env)
    environment[TOOL_CALL_ENV] = marker
    policy = policy_for(context, workdir=workdir)
    spawn = _Spawn(context, marker, kill_grace_seconds)
    if not policy.enabled:
        unconfined = await spawn.start(argv, cwd, environment)
        return await spawn.finish(unconfined, timeout_seconds, max_output_bytes)
    from toolang_core.sandbox.launch import prepare

    start_dir = Path(cwd) if cwd is not None else policy.workdir
    async with prepare(argv, policy=policy, env=environment, cwd=start_dir, label=marker) as launch:
        spawn.sandboxed = True
        # bubblewrap waits for it, started ahead as this one would be (sandbox.pool)
        process = await launch.start()
        return await spawn.finish(process, timeout_seconds, max_output_bytes)


class Program(Protocol):
    """What a call uses of a program it started: an :class:`asyncio.subprocess.Process`,
    or the bubblewrap a sandboxed one runs in
    (:class:`toolang_core.sandbox.pool.SandboxProcess`)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    @property
    def stdout(self) -> asyncio.StreamReader | None: ...

    @property
    def stderr(self) -> asyncio.StreamReader | None: ...

    async def wait(self) -> int: ...


@attrs.define
class _Spawn:
    """One program of one call: started, written down in the ledger, run, stopped."""

    context: ToolCallContext | None
    marker: str
    grace: float
    sandboxed: bool = False

    async def start(
        self, argv: Sequence[str], cwd: Path | str | None, env: Mapping[str, str]
    ) -> asyncio.subprocess.Process:
        starting = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group: stopping it stops its children
                preexec_fn=die_with_runtime(),  # it dies with the runtime
            )
        )
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            # Canceled while its pipes were being connected: the program runs already, and
            # asyncio would kill only its first process. Stop all of it, then go on.
            with contextlib.suppress(Exception):  # one that failed to start: nothing to stop
                await self.stop(await starting)
            raise

    async def stop(self, process: Program) -> None:
        if self.sandboxed:
            await stop_sandbox(process, self.grace)
        else:
            await stop_process_group(process, self.grace)

    async def finish(
        self, process: Program, timeout: float | None, max_output: int
    ) -> ToolProcessResult:
        # Written down until it is reaped: a runtime killed meanwhile cannot stop the
        # program, its next start can (process_ledger.stop_orphaned).
        entry = process_ledger.note_started(_home(self.context), process.pid, self.marker)
        try:
            return await _run(process, timeout, self.grace, max_output, self.stop)
        finally:
            process_ledger.note_ended(entry)


def _home(context: ToolCallContext | None) -> Path | None:
    runtime = getattr(context, "runtime", None)
    home = getattr(getattr(runtime, "config", None), "home", None)
    return home if isinstance(home, Path) else None


async def _run(
    process: Program,
    timeout_seconds: float | None,
    kill_grace_seconds: float,
    max_output_bytes: int,
    stop: Callable[[Program], Awaitable[None]],
) -> ToolProcessResult:
    out: list[bytes] = []
    err: list[bytes] = []
    assert process.stdout is not None
    assert process.stderr is not None
    readers = asyncio.gather(
        _drain(process.stdout, out, max_output_bytes),
        _drain(process.stderr, err, max_output_bytes),
    )
    timed_out = False
    try:
        async with asyncio.timeout(timeout_seconds):
            await asyncio.shield(readers)  # a time limit stops the wait, not the reading
            await process.wait()
    except TimeoutError:
        timed_out = True
        await stop(process)
        try:  # the group is gone: its pipes close; take the rest of what it wrote
            async with asyncio.timeout(kill_grace_seconds):
                await asyncio.shield(readers)
        except TimeoutError:  # a process that left the group still holds a pipe
            _abandon(readers)
    except BaseException:  # canceled: stop the work before the cancellation goes on
        _abandon(readers)
        await stop(process)
        raise
    return ToolProcessResult(
        exit_code=process.returncode,
        stdout=_text(out),
        stderr=_text(err),
        timed_out=timed_out,
    )


async def _drain(stream: asyncio.StreamReader, sink: list[bytes], limit: int) -> None:
    kept = 0
    while chunk := await stream.read(65536):
        if kept < limit:
            sink.append(chunk[: limit - kept])
            kept += len(sink[-1])


def _abandon(readers: asyncio.Future[Any]) -> None:
    """Stop reading; the outcome (a cancellation) is taken so asyncio does not report it."""
    readers.cancel()
    readers.add_done_callback(lambda done: done.cancelled() or done.exception())


def _text(chunks: list[bytes]) -> str:
    return b"".join(chunks).decode("utf-8", errors="replace")


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    # ProcessLookupError: already gone; PermissionError: the id was reused meanwhile
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def stop_process_group(process: Program, grace_seconds: float = 1.0) -> None:
    """Stop the process group ``process`` leads (it was started in a new session):
    ``SIGTERM``, up to ``grace_seconds`` for the leader to exit, then ``SIGKILL`` to
    whatever is left of the group; return once the leader is reaped.

    A second cancellation while this waits skips the rest of the grace: the group is
    killed at once.
    """
    pgid = process.pid
    _signal_group(pgid, signal.SIGTERM)
    try:
        async with asyncio.timeout(grace_seconds):
            await process.wait()
    except TimeoutError:
        pass
    finally:
        # Always: members that ignore SIGTERM may outlive a leader that obeyed it.
        _signal_group(pgid, signal.SIGKILL)
    await asyncio.shield(process.wait())


async def stop_sandbox(process: Program, grace_seconds: float = 1.0) -> None:
    """Stop the sandbox whose bubblewrap ``process`` leads: ``SIGTERM`` to every
    process inside it (all of them, those that started a session of their own too), up
    to ``grace_seconds`` for the program to end, then ``SIGKILL`` to the sandbox's init —
    which ends its whole PID namespace — and to bubblewrap; return once bubblewrap is
    reaped. A second cancellation while this waits skips the rest of the grace."""
    from toolang_core.sandbox.members import sandbox_processes, signal_all

    inside = sandbox_processes(process.pid)
    signal_all(inside.members, signal.SIGTERM)
    try:
        async with asyncio.timeout(grace_seconds):
            await process.wait()
    except TimeoutError:
        pass
    finally:
        signal_all(sandbox_processes(process.pid).inits or inside.inits, signal.SIGKILL)
        _signal_group(process.pid, signal.SIGKILL)
    await asyncio.shield(process.wait())


def started_by_tool(environ: Mapping[str, str] | None = None) -> str | None:
    """The marker of the tool call that started this process, directly or through its
    ancestors — ``None`` when no tool did (a person at a terminal, a service).

    A process may drop the variable before starting a program (``env -u``); the
    environment its ancestors were started with still shows it (read from ``/proc``
    where there is one). A process that left its parents behind (double fork, reparented
    to init) is not traced: this guards against the obvious paths, it is no sandbox.
    """
    source = os.environ if environ is None else environ
    marker = source.get(TOOL_CALL_ENV)
    if marker:
        return marker
    pid = os.getppid()
    for _ in range(_MAX_ANCESTORS):
        if pid <= 1:
            return None
        marker = _initial_env(pid).get(TOOL_CALL_ENV)
        if marker:
            return marker
        parent = _parent_of(pid)
        if parent is None:
            return None
        pid = parent
    return None


def _initial_env(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:  # no /proc, another user's process, or gone
        return {}
    found = {}
    for entry in raw.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep:
            found[name.decode(errors="replace")] = value.decode(errors="replace")
    return found


def _parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid …": comm may hold spaces and parentheses
    fields = stat.rpartition(")")[2].split()
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return None
