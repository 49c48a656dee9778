"""Everything a sandboxed program needs around it while it runs: the command line, its
environment, the runtime-side network proxy, the process-count cgroup — set up before
it starts and taken down after it ended (:func:`prepare`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path

import attrs

from toolang_core.sandbox import cgroup
from toolang_core.sandbox.bwrap import (
    BRIDGE_SCRIPT,
    PROXY_PORT,
    PROXY_SOCKET,
    bwrap_argv,
    process_count_argv,
    resource_limits,
)
from toolang_core.sandbox.cgroup import process_limit_mode
from toolang_core.sandbox.policy import SandboxError, SandboxPolicy
from toolang_core.sandbox.proxy import NetworkProxy, ProxyRules, proxy_env
from toolang_core.sandbox.rules import ProcessLimits
from toolang_core.sandbox.support import SandboxSupport, sandbox_support

_BRIDGE = Path(__file__).with_name("bridge.py")


@attrs.frozen
class Launch:
    """How to start the sandboxed program: ``argv`` (bubblewrap's), the environment
    bubblewrap itself gets (exactly the program's: bwrap's init inside shows it), and
    the steps to run in the new process before bubblewrap (``preexec_fn``): setting the
    resource limits, joining the process-count cgroup."""

    argv: list[str]
    env: dict[str, str]
    preexec: tuple[Callable[[], None], ...] = ()


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
    """The program must be able to start where it is asked to: not in a hidden place."""
    real = Path(os.path.realpath(cwd))
    if real == policy.workdir or policy.workdir in real.parents:
        return
    for entry in policy.hidden:
        if real == entry.path or entry.path in real.parents:
            raise SandboxError(
                f"cannot start a program in {cwd}: sandboxed programs do not see "
                f"{entry.path}; start it in the working directory {policy.workdir}"
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
    block runs.

    :raises SandboxError: when no sandbox is available here (what to install is said).
    """
    found = await support()
    if not found.available or found.bwrap is None:
        raise unavailable_error(found)
    _check_cwd(cwd, policy)
    network = policy.network == "allow"
    helpers = 1 + network  # bwrap's init, the bridge
    count = policy.limits.max_processes
    mode = process_limit_mode().kind
    counted = process_count_argv(count + helpers if mode == "rlimit" else 0, prlimit=found.prlimit)
    command = [*counted, *argv]
    environment = dict(env)
    for name in ("TMPDIR", "TMP", "TEMP"):  # the runtime's temporary directory is not there
        if name in environment:
            environment[name] = "/tmp"
    binds: list[tuple[Path, str]] = []
    proxy = None
    group = None
    try:
        if network:
            proxy = NetworkProxy(ProxyRules(policy.allow_hosts, policy.local_targets), label)
            binds += [(await proxy.start(), PROXY_SOCKET), (_BRIDGE, BRIDGE_SCRIPT)]
            bridge = [sys.executable, "-I", "-S", BRIDGE_SCRIPT, PROXY_SOCKET, str(PROXY_PORT)]
            command = [*bridge, "--", *command]
            environment.update(proxy_env(PROXY_PORT))
        if count and mode == "cgroup":
            # bubblewrap's outer process joins too (it moves in before it starts anything)
            group = cgroup.create(count + helpers + 1)
        full = bwrap_argv(
            found.bwrap,
            policy,
            command,
            hidden=policy.hidden,
            cwd=cwd,
            binds=binds,
            disable_userns=found.disable_userns,
        )
        steps = (_set_limits(policy.limits), cgroup.joiner(group))
        yield Launch(full, environment, tuple(step for step in steps if step is not None))
    finally:
        if proxy is not None:
            await proxy.close()
        cgroup.remove_soon(group)


def _set_limits(limits: ProcessLimits) -> Callable[[], None] | None:
    """A ``preexec_fn`` step setting the per-process limits (soft and hard alike)."""
    chosen = resource_limits(limits)
    if not chosen:
        return None

    def apply() -> None:
        for kind, value in chosen:
            resource.setrlimit(kind, (value, value))

    return apply
