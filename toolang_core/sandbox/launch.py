"""Everything a sandboxed program needs around it while it runs: bubblewrap's options,
its environment, the runtime-side network proxy, the process-count cgroup — set up before
it starts and taken down after it ended (:func:`prepare`); started in a bubblewrap that
waits for it (:mod:`.pool`)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from toolang_core.sandbox import cgroup, pool
from toolang_core.sandbox.bwrap import (
    BRIDGE_SCRIPT,
    PROXY_PORT,
    PROXY_SOCKET,
    bwrap_options,
    process_count_argv,
    resource_limits,
)
from toolang_core.sandbox.cgroup import process_limit_mode
from toolang_core.sandbox.policy import SandboxError, SandboxPolicy, policy_for
from toolang_core.sandbox.proxy import NetworkProxy, ProxyRules, proxy_env
from toolang_core.sandbox.rules import ProcessLimits
from toolang_core.sandbox.support import SandboxSupport, sandbox_support

if TYPE_CHECKING:
    from toolang_core.tools.types import ToolCallContext

_BRIDGE = Path(__file__).with_name("bridge.py")


@attrs.define
class Launch:
    """How the sandboxed program starts: bubblewrap's ``options`` (namespaces, mounts,
    hidden paths, where it starts), the program's ``env`` (exactly its environment:
    nothing else in the sandbox shows the runtime's), the ``command`` run inside (the
    network bridge, the process count's ``prlimit``, then the program), the per-process
    ``limits`` (``(resource, value)``) and how many processes the sandbox's cgroup
    allows (``pids``; ``0``: no limit, or no cgroup)."""

    bwrap: str
    options: list[str]
    env: dict[str, str]
    command: list[str]
    limits: list[tuple[int, int]] = attrs.Factory(list)
    pids: int = 0
    group: Path | None = None
    """The sandbox's cgroup, once started."""

    @property
    def argv(self) -> list[str]:
        """The same as one command line (for a person: it is never run so)."""
        return [self.bwrap, *self.options, "--", *self.command]

    async def start(self) -> pool.SandboxProcess:
        """Start it in a waiting bubblewrap (:mod:`.pool`); return bubblewrap's process.

        :raises SandboxError: when bubblewrap could not be started.
        """
        waiting = pool.pool_for(self.bwrap)
        process, self.group = await waiting.start(
            self.options, self.env, self.command, self.limits, self.pids
        )
        return process

    async def open(self) -> pool.SandboxProcess:
        """Start it with its standard input a pipe (``stdin``) — in a bubblewrap of its
        own, started now (a long-lived program starts once: no pool needed); return
        bubblewrap's process.

        :raises SandboxError: when bubblewrap could not be started.
        """
        try:
            entry = await pool.start_waiting(self.bwrap, program_input=True)
        except OSError as exc:
            raise SandboxError(f"could not start bubblewrap ({self.bwrap}): {exc}") from exc
        try:
            process = await entry.hand(self.options, self.env, self.command, self.limits, self.pids)
        except BaseException as exc:  # never to run: it goes
            await entry.discard()
            if isinstance(exc, (OSError, ValueError)):  # ValueError: a limit too high
                raise SandboxError(f"could not start the sandbox: {exc}") from exc
            raise
        self.group = entry.group
        return process


async def support() -> SandboxSupport:
    """:func:`~toolang_core.sandbox.support.sandbox_support`, probed off the event loop
    the first time."""
    if sandbox_support.cache_info().currsize:
        return sandbox_support()
    return await asyncio.to_thread(sandbox_support)


def unavailable_error(found: SandboxSupport) -> SandboxError:
    """The error a tool's call gets where ``[tools] sandbox = "required"`` and no
    sandbox is available."""
    return SandboxError(
        f"refused to start the program: {found.problem}. Tools' programs run only in the "
        'OS sandbox while [tools] sandbox = "required"; `toolang doctor` shows what is '
        "missing"
    )


def _check_cwd(cwd: Path, policy: SandboxPolicy) -> None:
    """The program must be able to start where it is asked to: not in a hidden place,
    in a directory."""
    real = Path(os.path.realpath(cwd))
    inside = real == policy.workdir or policy.workdir in real.parents
    for entry in () if inside else policy.hidden:
        if real == entry.path or entry.path in real.parents:
            raise SandboxError(
                f"cannot start a program in {cwd}: sandboxed programs do not see "
                f"{entry.path}; start it in the working directory {policy.workdir}"
            )
    if not real.is_dir():  # as starting any program there would say
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(cwd))


def _check_places(policy: SandboxPolicy) -> None:
    """The places shown besides the working directory must exist, and not be inside
    what is hidden (the runtime's home, its store, secrets) — shown, it would show."""
    for path in (*policy.read_only, *policy.writable):
        if not path.is_absolute() or not path.exists():
            raise SandboxError(f"cannot show {path} to the sandboxed program: no such path")
        for entry in policy.hidden:
            if path == entry.path or entry.path in path.parents:
                raise SandboxError(
                    f"cannot show {path} to the sandboxed program: it is inside "
                    f"{entry.path}, which sandboxed programs never see (the runtime's "
                    "state or a secret)"
                )


@contextlib.asynccontextmanager
async def prepare(
    argv: Sequence[str],
    *,
    policy: SandboxPolicy,
    env: Mapping[str, str],
    cwd: Path,
    label: str = "",
) -> AsyncIterator[Launch]:
    """Set up the sandbox of ``argv`` (see the module docstring) for as long as the
    block runs; :meth:`Launch.start` starts it.

    :raises SandboxError: when no sandbox is available here (what to install is said).
    """
    found = await support()
    if not found.available or found.bwrap is None:
        raise unavailable_error(found)
    cwd = Path(os.path.abspath(cwd))
    _check_cwd(cwd, policy)
    _check_places(policy)
    network = policy.network == "allow"
    helpers = 1 + network  # bwrap's init, the bridge
    count = policy.limits.max_processes
    mode = process_limit_mode().kind
    counted = process_count_argv(count + helpers if mode == "rlimit" else 0, prlimit=found.prlimit)
    # bubblewrap's outer process is in the cgroup too
    pids = count + helpers + 1 if count and mode == "cgroup" else 0
    command = [*counted, *argv]
    environment = dict(env)
    for name in ("TMPDIR", "TMP", "TEMP"):  # the runtime's temporary directory is not there
        if name in environment:
            environment[name] = "/tmp"
    binds: list[tuple[Path, str]] = []
    proxy = None
    launch = None
    try:
        if network:
            proxy = NetworkProxy(ProxyRules(policy.allow_hosts, policy.local_targets), label)
            binds += [(await proxy.start(), PROXY_SOCKET), (_BRIDGE, BRIDGE_SCRIPT)]
            bridge = [sys.executable, "-I", "-S", BRIDGE_SCRIPT, PROXY_SOCKET, str(PROXY_PORT)]
            command = [*bridge, "--", *command]
            environment.update(proxy_env(PROXY_PORT))
        options = bwrap_options(
            policy,
            hidden=policy.hidden,
            cwd=cwd,
            binds=binds,
            disable_userns=found.disable_userns,
        )
        limits = resource_limits(policy.limits)
        launch = Launch(found.bwrap, options, environment, command, limits, pids)
        yield launch
    finally:
        if proxy is not None:
            await proxy.close()
        if launch is not None:
            cgroup.remove_soon(launch.group)


def sandbox_argv(
    context: ToolCallContext | None,
    command: Sequence[str],
    *,
    workdir: Path,
    read_only: Sequence[Path] = (),
    share_network: bool = False,
) -> list[str]:
    """bubblewrap's command line (``[bwrap, options…, "--", *command]``) for a program
    the caller starts and watches itself — one that needs more than
    :func:`~toolang_core.open_tool_process` gives (inherited file descriptors besides
    standard input, output and error, say). Its file system is a tool program's for the
    call ``context`` (:func:`~toolang_core.sandbox.policy.policy_for`): the runtime's
    home, config, store, approval key, every working directory root and the user's
    secrets hidden; ``workdir`` (an existing directory outside all of them) its one
    writable place and where it starts; ``read_only`` more places shown read-only.

    Unlike a tool program's sandbox: no resource limits are set (the caller sets its
    own), nothing is proxied, and with ``share_network`` the program keeps the host's
    network namespace — whatever it reaches is the caller's to check. The environment
    is the one the command line is started with (bubblewrap passes it on), and so are
    the file descriptors it inherits.

    :raises SandboxError: when no sandbox is available here (what to install is said),
        or a place cannot be shown.
    """
    found = sandbox_support()
    if not found.available or found.bwrap is None:
        raise SandboxError(f"no sandbox available: {found.problem}")
    policy = attrs.evolve(
        policy_for(context, workdir=workdir),
        limits=ProcessLimits(),
        read_only=tuple(Path(os.path.realpath(p)) for p in read_only),
    )
    _check_places(policy)
    options = bwrap_options(
        policy,
        hidden=policy.hidden,
        cwd=policy.workdir,
        disable_userns=found.disable_userns,
        share_network=share_network,
    )
    return [found.bwrap, *options, "--", *command]
