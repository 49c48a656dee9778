"""The processes of a running sandbox, found from outside it through ``/proc``.

bubblewrap's first process (the one the runtime started) stays outside the sandbox and
waits; its child is the sandbox's init (PID 1 inside). Every process of the sandbox is
a descendant of that init — a process that double-forks or calls ``setsid`` is
re-parented to the init of its PID namespace, never out of it — and killing the init
kills them all (the kernel ends a PID namespace with its first process).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable
from pathlib import Path

import attrs


@attrs.frozen
class SandboxProcesses:
    """``inits``: the sandbox's PID 1 (children of bubblewrap's outer process);
    ``members``: every other process in it."""

    inits: tuple[int, ...]
    members: tuple[int, ...]


def _parents() -> dict[int, int]:
    """pid → parent pid of every process (zombies too)."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        with contextlib.suppress(IndexError, ValueError):
            found[int(name)] = int(fields[1])
    return found


def sandbox_processes(outer: int) -> SandboxProcesses:
    """The processes of the sandbox whose bubblewrap outer process is ``outer``."""
    parents = _parents()
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    inits = tuple(children.get(outer, ()))
    members: list[int] = []
    pending = [c for init in inits for c in children.get(init, ())]
    while pending:
        pid = pending.pop()
        members.append(pid)
        pending.extend(children.get(pid, ()))
    return SandboxProcesses(inits, tuple(members))


def signal_all(pids: Iterable[int], sig: signal.Signals) -> None:
    """Send ``sig`` to each of ``pids`` that still exists."""
    for pid in pids:
        # ProcessLookupError: gone meanwhile; PermissionError: the pid was reused
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
