"""Long-lived programs a plugin speaks to through pipes, in the same sandbox as a tool's.

:func:`~toolang_core.run_tool_process` runs a program to its end and returns what it
wrote; some programs are servers instead — an MCP server over stdio, a language server —
started once and spoken to for as long as the runtime runs. :func:`open_tool_process`
starts such a program under the same rules (see :mod:`toolang_core.tools.process`): the
OS sandbox the policy describes (bubblewrap's namespaces, the read-only file system with
one writable working directory, the runtime's state and the user's secrets hidden, the
limits, the process-count cgroup of a runtime running as root), its network off unless
the caller or the configuration allows it, an allow-listed environment with the marker,
a first process that dies with the runtime (``PR_SET_PDEATHSIG``: a sandbox's whole
PID namespace with it) and an entry in the process ledger until it is reaped. What is
added: its standard input is a pipe the caller writes, and the caller says when it ends
(leaving the ``async with`` block).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from toolang_core.sandbox.deathsig import die_with_runtime
from toolang_core.sandbox.rules import Network, parse_host_rule
from toolang_core.tools import process_ledger
from toolang_core.tools.process import (
    TOOL_CALL_ENV,
    Program,
    stop_process_group,
    stop_sandbox,
    tool_call_marker,
    tool_process_env,
)

if TYPE_CHECKING:
    from toolang_core.config.model import ToolangConfig
    from toolang_core.sandbox.policy import SandboxPolicy
    from toolang_core.tools.types import ToolCallContext


@attrs.define(eq=False)
class OpenToolProcess:
    """A program started by :func:`open_tool_process`, running until its block ends.

    ``stdin`` is its standard input (write, then ``await stdin.drain()``), ``stdout`` and
    ``stderr`` its output — read both, or a program that writes much waits for ever.
    ``pid`` is its outermost process (bubblewrap's for a sandboxed program: the program's
    own id is another in its PID namespace); ``sandboxed`` whether it runs in the sandbox
    (``False`` only with ``[tools] sandbox = "off"``); ``policy`` the sandbox it got.
    """

    process: Program
    stdin: asyncio.StreamWriter
    stdout: asyncio.StreamReader
    stderr: asyncio.StreamReader
    sandboxed: bool
    policy: SandboxPolicy
    grace: float = 1.0
    _ending: asyncio.Future[None] | None = attrs.field(default=None, init=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        """Its exit status once it ended and was reaped (``None`` while it runs)."""
        return self.process.returncode

    async def wait(self) -> int:
        """Wait for it to end; return its exit status."""
        return await self.process.wait()

    async def close(self) -> None:
        """End it now, as the end of its block does: its input closed, ``grace`` to
        end, then stopped with everything it started, and reaped. Its output streams
        then end (a reader of them sees the end of file). Again: nothing more."""
        if self._ending is None:
            self._ending = asyncio.ensure_future(_end(self, self.grace))
        await asyncio.shield(self._ending)


@attrs.frozen
class _Outside:
    """A call context for a program started outside any call: only the runtime (its
    configuration decides the policy: what is hidden, the limits, the mode)."""

    runtime: Any


@attrs.frozen
class _ConfigOnly:
    """A runtime not yet made: its configuration alone."""

    config: ToolangConfig | None


@contextlib.asynccontextmanager
async def open_tool_process(
    argv: Sequence[str],
    *,
    context: ToolCallContext | None = None,
    runtime: Any = None,
    config: ToolangConfig | None = None,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    workdir: Path | str | None = None,
    network: Network | None = None,
    allow_hosts: Iterable[str] | None = None,
    read_only: Iterable[Path | str] = (),
    writable: Iterable[Path | str] = (),
    kill_grace_seconds: float = 1.0,
) -> AsyncIterator[OpenToolProcess]:
    """Start ``argv`` for as long as the ``async with`` block runs, its standard input,
    output and error pipes to the caller; at the end of the block its input is closed,
    it gets ``kill_grace_seconds`` to end, then it and everything it started is stopped
    (``SIGTERM``, then ``SIGKILL`` after another grace) and reaped — also when the
    block is left by an exception or a cancellation.

    The sandbox is :func:`toolang_core.sandbox.policy.policy_for` ``(context)`` — a
    program started outside any call passes ``runtime`` instead, or before there is a
    runtime its ``config`` (the configuration decides what is hidden, the limits and
    the mode) — with, per program:
    ``workdir`` (the one writable directory; default the call's or the runtime's, see
    :func:`toolang_core.tool_workdir`), ``network`` (``"off"`` or ``"allow"``; default
    the configuration's) and ``allow_hosts`` (default the configuration's), and
    ``read_only`` / ``writable`` places shown besides (absolute, existing, not inside
    what the sandbox hides). ``cwd`` (default ``workdir``) is where it starts; ``env``
    defaults to :func:`toolang_core.tool_process_env` and always gets the marker.
    With ``[tools] sandbox = "off"`` it runs unconfined, as the runtime's user.

    :raises toolang_core.SandboxError: when the sandbox is required and not available
        here, ``cwd`` is hidden from the program, or a place cannot be shown.
    :raises OSError: when an unconfined program cannot be started.
    """
    from toolang_core.sandbox.policy import SandboxError, policy_for

    where: Any = context
    if context is None and (runtime is not None or config is not None):
        where = _Outside(runtime if runtime is not None else _ConfigOnly(config))
    marker = tool_call_marker(context)
    environment = dict(tool_process_env(context) if env is None else env)
    environment[TOOL_CALL_ENV] = marker
    policy = policy_for(where, workdir=workdir)
    try:
        policy = attrs.evolve(
            policy,
            network=policy.network if network is None else network,
            allow_hosts=policy.allow_hosts
            if allow_hosts is None
            else tuple(parse_host_rule(h) for h in allow_hosts),
            read_only=tuple(_real(p) for p in read_only),
            writable=tuple(_real(p) for p in writable),
        )
    except ValueError as exc:  # a host rule
        raise SandboxError(f"cannot start {argv[0]!r}: {exc}") from exc
    home = getattr(getattr(getattr(where, "runtime", None), "config", None), "home", None)
    async with contextlib.AsyncExitStack() as stack:
        if policy.enabled:
            from toolang_core.sandbox.launch import prepare

            start_dir = Path(cwd) if cwd is not None else policy.workdir
            launch = await stack.enter_async_context(
                prepare(argv, policy=policy, env=environment, cwd=start_dir, label=marker)
            )
            process: Any = await launch.open()
        else:
            process = await _start_unconfined(argv, cwd, environment)
        entry = process_ledger.note_started(
            home if isinstance(home, Path) else None, process.pid, marker
        )
        opened = OpenToolProcess(
            process,
            process.stdin,
            process.stdout,
            process.stderr,
            policy.enabled,
            policy,
            kill_grace_seconds,
        )
        try:
            yield opened
        finally:
            await opened.close()
            process_ledger.note_ended(entry)


async def _start_unconfined(
    argv: Sequence[str], cwd: Path | str | None, env: Mapping[str, str]
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: stopping it stops its children
        preexec_fn=die_with_runtime(),  # it dies with the runtime
    )


async def _end(opened: OpenToolProcess, grace: float) -> None:
    """Close its input (a server's cue to end), give it ``grace``, then stop it all."""
    with contextlib.suppress(OSError, RuntimeError):  # a pipe already broken or closed
        opened.stdin.close()
    try:
        async with asyncio.timeout(grace):
            await opened.process.wait()
    except TimeoutError:
        pass
    if opened.sandboxed:  # everything in its PID namespace, however it left its group
        if opened.returncode is None:  # once bubblewrap ended, so did its namespace
            await stop_sandbox(opened.process, grace)
    else:
        await stop_process_group(opened.process, grace)


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))
