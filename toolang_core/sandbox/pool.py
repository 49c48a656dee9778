"""bubblewrap started ahead of the program it will sandbox: what a call waits for is
the sandbox being made, not starting bubblewrap.

Starting bubblewrap the plain way costs a fork of the runtime (its ``preexec_fn``
rules out ``vfork``), bubblewrap's own start and — for a runtime running as root —
moving it into its pids cgroup, which waits for the kernel (an RCU grace period, ~10 ms;
more on a busy machine). A :class:`Pool` does all of that before it is asked: it keeps
bubblewraps waiting, started as a program's always was — a session of its own, dying
with the runtime (``PR_SET_PDEATHSIG``), standard input from ``/dev/null``, its output
into pipes — and, for a runtime running as root, already alone in a pids cgroup of its
own that lets it start nothing (:func:`.cgroup.enter`). It has an empty environment and
nothing of any call on its command line (``bwrap --args <fd> -- /bin/sh``): it waits,
reading its options from a pipe; the shell it will run reads its script from standard
input, another pipe.

A call takes it, sets its per-process limits (``prlimit``: as a ``preexec_fn`` would
have), raises its cgroup's ``pids.max`` to the sandbox's limit, and writes into that
pipe everything the sandbox is — the namespaces, the mounts and hidden paths, where to
start, the program's environment (``--setenv``: the values are on no command line) —
then closes it; into standard input goes :func:`script`: the call's command, run in
place of the shell with standard input from ``/dev/null``. bubblewrap makes the
sandbox, and the shell inside runs the command. Nothing of a call is decided before the
call. Another bubblewrap is started for the next call
in the background; calls at once beyond those waiting start their own the same way.

There is one pool per event loop (its processes' pipes belong to the loop), made on
first use. :func:`close` empties it (the runtime does at shutdown), and so does the end
of the loop (``asyncio.run`` cancels the pool's keeper, which kills and reaps what waits
and removes its cgroup). A runtime that dies takes its waiting bubblewrap with it, and
the next start's sweep removes its cgroup (:func:`.cgroup.sweep`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Final

import attrs
import structlog

from toolang_core.sandbox import cgroup
from toolang_core.sandbox.deathsig import die_with_runtime
from toolang_core.sandbox.policy import SandboxError

log = structlog.get_logger("toolang.sandbox")

SIZE: Final = 2
"""How many bubblewraps wait: two calls in a row — or at once — need not wait for one
to be started."""


@attrs.define(eq=False)
class SandboxProcess:
    """bubblewrap's process once a call has handed it its sandbox: what a call uses of
    an :class:`asyncio.subprocess.Process` (``pid``, ``returncode``, the ``stdout`` and
    ``stderr`` streams, :meth:`wait`)."""

    popen: subprocess.Popen[bytes]
    stdout: asyncio.StreamReader | None = None
    stderr: asyncio.StreamReader | None = None
    stdin: asyncio.StreamWriter | None = None
    """The program's standard input: only for one started to read it
    (:func:`start_waiting` ``program_input``); else it reads ``/dev/null``."""

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    async def wait(self) -> int:
        """Wait for it to end and reap it; return its exit status."""
        return await exited(self.popen)


async def exited(popen: subprocess.Popen[bytes]) -> int:
    """Wait, without a thread, for ``popen`` to end; reap it and return its status.

    asyncio's child watchers are not used: a process asyncio starts is known to end
    only once a task of the loop has joined its pipes, and the end of the loop
    (``asyncio.run``) cancels that task with every other — a keeper starting a
    bubblewrap just then would wait for it for ever (CPython 3.11). A pidfd (Linux 5.3)
    becomes readable when the process ends; elsewhere a thread waits.
    """
    if popen.returncode is not None:
        return popen.returncode
    loop = asyncio.get_running_loop()
    try:
        pidfd = os.pidfd_open(popen.pid)
    except (AttributeError, OSError):  # no pidfds here: a thread waits instead
        return await asyncio.shield(loop.run_in_executor(None, popen.wait))
    ended: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ended.done():
            ended.set_result(None)

    loop.add_reader(pidfd, readable)
    try:
        await ended
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)
    return popen.wait()  # it has ended: at once


@attrs.define
class Waiting:
    """A bubblewrap waiting for its options on the pipe ``options_fd``; ``group`` is
    its cgroup (``None`` where there is none). Its standard streams are pipes, joined
    to the event loop when a call takes it (:meth:`hand`)."""

    popen: subprocess.Popen[bytes]
    options_fd: int
    group: Path | None = None
    script_fd: int = -1
    """Where the shell reads its script when standard input is the program's (else -1:
    the shell reads it on standard input)."""
    script_inside: int = -1
    """That pipe's number in the sandbox."""
    _transports: list[asyncio.BaseTransport] = attrs.field(factory=list, init=False)
    _given: list[IO[bytes]] = attrs.field(factory=list, init=False)
    """Its pipes given to the loop: owned by a transport (or closed by asyncio)."""

    async def hand(
        self,
        options: Sequence[str],
        env: Mapping[str, str],
        command: Sequence[str],
        limits: Sequence[tuple[int, int]],
        pids: int,
    ) -> SandboxProcess:
        """Let it make the sandbox ``options`` describe and run ``command`` there with
        ``env`` as its environment; first its per-process ``limits`` are set (soft and
        hard: every process of the sandbox inherits them, none can raise them) and its
        cgroup allows ``pids`` processes (``0``: no limit). Return it, its output read
        through its ``stdout`` and ``stderr`` streams."""
        for kind, value in limits:
            resource.prlimit(self.popen.pid, kind, (value, value))
        cgroup.allow(self.group, pids)
        variables = [part for pair in env.items() for part in ("--setenv", *pair)]
        data = [*options, *variables]
        payload = memoryview(b"".join(os.fsencode(part) + b"\0" for part in data))
        try:
            while payload:  # bubblewrap reads as it comes: a large environment fits
                payload = payload[os.write(self.options_fd, payload) :]
        finally:
            self._close_pipe()
        assert self.popen.stdin is not None
        assert self.popen.stdout is not None
        assert self.popen.stderr is not None
        process = SandboxProcess(self.popen)
        process.stdout = await self._reader(self.popen.stdout)
        process.stderr = await self._reader(self.popen.stderr)
        if self.script_fd >= 0:  # standard input is the program's
            pipe, self.script_fd = os.fdopen(self.script_fd, "wb"), -1
            shell = await self._writer(pipe)
            shell.write(script(command, program_input=self.script_inside))
            shell.close()
            process.stdin = await self._stream_writer(self.popen.stdin)
            return process
        # the loop writes the script as the shell reads it: any size
        shell = await self._writer(self.popen.stdin)
        shell.write(script(command))
        shell.close()  # once written
        return process

    async def discard(self) -> None:
        """Kill it (it has started nothing), reap it and remove its cgroup."""
        with contextlib.suppress(ProcessLookupError):
            self.popen.kill()
        self._close_pipe()  # killed first: it never reads an end without options
        if self.script_fd >= 0:
            os.close(self.script_fd)
            self.script_fd = -1
        for transport in self._transports:
            # Out of the loop's selector at once, its pipe closed after: closing the
            # pipe first would leave its number there, and a pidfd given that number
            # would lose its reader when the transport goes.
            transport.close()
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None and stream not in self._given:
                stream.close()
        await exited(self.popen)
        if self.group is not None:  # in a thread: it may wait for another's move
            await asyncio.get_running_loop().run_in_executor(None, cgroup.remove, self.group)

    async def _reader(self, pipe: IO[bytes]) -> asyncio.StreamReader:
        """A stream reading ``pipe``, as an asyncio subprocess's is."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(loop=loop)
        self._given.append(pipe)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe
        )
        self._transports.append(transport)
        return reader

    async def _writer(self, pipe: IO[bytes]) -> asyncio.WriteTransport:
        loop = asyncio.get_running_loop()
        self._given.append(pipe)
        transport, _ = await loop.connect_write_pipe(asyncio.Protocol, pipe)
        self._transports.append(transport)
        return transport

    async def _stream_writer(self, pipe: IO[bytes]) -> asyncio.StreamWriter:
        """A stream writing ``pipe``, as an asyncio subprocess's ``stdin`` is."""
        loop = asyncio.get_running_loop()
        self._given.append(pipe)
        protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop)
        transport, _ = await loop.connect_write_pipe(lambda: protocol, pipe)
        self._transports.append(transport)
        return asyncio.StreamWriter(transport, protocol, None, loop)

    def _close_pipe(self) -> None:
        if self.options_fd >= 0:
            os.close(self.options_fd)
            self.options_fd = -1


async def start_waiting(bwrap: str, *, program_input: bool = False) -> Waiting:
    """Start a bubblewrap that waits for its options, and move it into its cgroup.

    ``program_input``: its standard input is to be the program's (a long-lived program
    spoken to through a pipe, :func:`toolang_core.open_tool_process`), so the shell
    reads its script from another pipe — never from the program's input, whose first
    bytes it could otherwise read ahead and keep.

    :raises OSError: when it cannot be started or moved (nothing is left behind).
    """
    read, write = os.pipe()
    script_read, script_write = os.pipe() if program_input else (-1, -1)
    shell = ["/bin/sh", f"/dev/fd/{script_read}"] if program_input else ["/bin/sh"]
    passed = (read, script_read) if program_input else (read,)
    try:
        # On the loop's thread (as asyncio starts a program): it dies with this thread.
        popen = subprocess.Popen(
            [bwrap, "--args", str(read), "--", *shell],
            env={},
            cwd="/",
            stdin=subprocess.PIPE,  # the shell's script: the command
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, as every program's
            pass_fds=passed,
            # only an already loaded prctl: safe with threads (sandbox.deathsig)
            preexec_fn=die_with_runtime(),  # noqa: PLW1509
        )
    except BaseException:
        os.close(write)
        if program_input:
            os.close(script_write)
        raise
    finally:
        os.close(read)
        if program_input:
            os.close(script_read)
    entry = Waiting(popen, write, script_fd=script_write, script_inside=script_read)
    # A future, not a task: the end of the loop cancels tasks, and the move must be
    # waited for whatever happens (the cgroup it makes is removed with the process).
    moving = asyncio.get_running_loop().run_in_executor(None, cgroup.enter, popen.pid)
    try:
        entry.group = await asyncio.shield(moving)
    except BaseException:
        with contextlib.suppress(BaseException):  # even a second cancellation
            entry.group = await moving
        await entry.discard()
        raise
    return entry


def script(command: Sequence[str], *, program_input: int | None = None) -> bytes:
    """What the shell inside runs: ``command`` in its place, standard input from
    ``/dev/null`` (the same in the sandbox as outside) — or, with ``program_input``
    (the descriptor the shell reads this script from), the shell's own standard input. Quoted
    for the shell, so any argument arrives as it is; through a pipe, so any length the
    kernel allows a program's arguments fits."""
    if program_input is not None:
        # the shell reads this from /dev/fd/N; N (an emptied pipe) is closed for the
        # program where the shell can name it (one digit)
        closing = f" {program_input}<&-" if 0 <= program_input <= 9 else ""
        return os.fsencode(f"exec {shlex.join(command)}{closing}\n")
    return os.fsencode(f"exec {shlex.join(command)} </dev/null\n")


class Pool:
    """Up to :data:`SIZE` waiting bubblewraps (``bwrap``) of one event loop, started
    again after each call takes one."""

    def __init__(self, bwrap: str) -> None:
        self.bwrap = bwrap
        self._ready: list[Waiting] = []
        self._wanted = asyncio.Event()
        self._keeper: asyncio.Task[None] | None = None

    async def start(
        self,
        options: Sequence[str],
        env: Mapping[str, str],
        command: Sequence[str],
        limits: Sequence[tuple[int, int]],
        pids: int,
    ) -> tuple[SandboxProcess, Path | None]:
        """Run ``command`` in the sandbox ``options`` describe (see
        :meth:`Waiting.hand`); return bubblewrap's process and its cgroup.

        :raises SandboxError: when bubblewrap could not be started or given its options.
        """
        try:
            entry = await self._take()
        except OSError as exc:
            raise SandboxError(f"could not start bubblewrap ({self.bwrap}): {exc}") from exc
        try:
            process = await entry.hand(options, env, command, limits, pids)
        except BaseException as exc:  # taken, never to wait again: it goes
            await entry.discard()
            if isinstance(exc, (OSError, ValueError)):  # ValueError: a limit too high
                raise SandboxError(f"could not start the sandbox: {exc}") from exc
            raise
        return process, entry.group

    @property
    def waiting(self) -> tuple[Waiting, ...]:
        """The bubblewraps waiting now."""
        return tuple(self._ready)

    async def close(self) -> None:
        """Kill and reap what waits, remove its cgroup; a later call starts anew."""
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper

    async def _take(self) -> Waiting:
        self._want_more()
        while self._ready:
            entry = self._ready.pop(0)
            if entry.popen.poll() is None:
                return entry
            await entry.discard()  # killed while it waited
        return await start_waiting(self.bwrap)

    def _want_more(self) -> None:
        if self._keeper is None or self._keeper.done():
            loop = asyncio.get_running_loop()
            self._keeper = loop.create_task(self._keep(loop), name="toolang-sandbox-pool")
        self._wanted.set()

    async def _keep(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            while True:
                await self._wanted.wait()
                self._wanted.clear()
                while len(self._ready) < SIZE:
                    try:
                        self._ready.append(await start_waiting(self.bwrap))
                    except OSError as exc:  # the next call starts its own, and says why
                        log.warning("sandbox.pool_start_failed", error=str(exc))
                        break
        finally:
            ready, self._ready = self._ready, []
            if _pools.get((loop, self.bwrap)) is self:
                del _pools[loop, self.bwrap]
            for entry in ready:
                await entry.discard()


_pools: dict[tuple[asyncio.AbstractEventLoop, str], Pool] = {}
"""The pools of each event loop, by bubblewrap (a pool's keeper removes it as it ends)."""


def pool_for(bwrap: str) -> Pool:
    """The running event loop's pool of ``bwrap`` (made on first use)."""
    key = (asyncio.get_running_loop(), bwrap)
    found = _pools.get(key)
    if found is None:
        found = _pools[key] = Pool(bwrap)
    return found


async def close() -> None:
    """Empty the running event loop's pools (the runtime's shutdown)."""
    loop = asyncio.get_running_loop()
    for (its_loop, _), found in list(_pools.items()):
        if its_loop is loop:
            await found.close()
