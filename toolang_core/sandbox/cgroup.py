"""How ``max_processes`` is enforced: ``RLIMIT_NPROC``, or a pids cgroup for a runtime
that runs as root.

``RLIMIT_NPROC`` counts the processes of one user in one user namespace (Linux 5.14 and
later). Set inside the sandbox's own user namespace, it bounds the sandbox's processes
and nothing else — for a runtime that is not root. The kernel never applies it to a
process whose real user is root, whatever the namespace; so a runtime running as root
puts each sandbox into a cgroup of its own in the ``pids`` controller (cgroup v2 where
the controller is delegated to the runtime's cgroup, else the v1 hierarchy) with
``pids.max``. When neither is possible (root, and no writable pids cgroup) the process
limit is **not enforced**; :func:`process_limit_mode` says so, and ``toolang doctor``
warns.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import os
import signal
import time
from pathlib import Path
from typing import Final, Literal

import attrs

PREFIX: Final = "toolang-sandbox-"
_counter = itertools.count(1)


@attrs.frozen
class ProcessLimitMode:
    """``rlimit`` (not root), ``cgroup`` (root; sandboxes' cgroups go under ``parent``)
    or ``none`` (root without a pids cgroup it may write)."""

    kind: Literal["rlimit", "cgroup", "none"]
    parent: Path | None = None

    def describe(self) -> str:
        if self.kind == "rlimit":
            return "process limit: RLIMIT_NPROC in the sandbox's user namespace"
        if self.kind == "cgroup":
            return f"process limit: a pids cgroup per sandbox under {self.parent}"
        return (
            "process limit NOT enforced: the runtime runs as root (RLIMIT_NPROC does not "
            "apply to root) and no pids cgroup is writable"
        )


@functools.cache
def process_limit_mode() -> ProcessLimitMode:
    """How this process's sandboxes get their process limit (looked at once)."""
    if os.geteuid() != 0:
        return ProcessLimitMode("rlimit")
    parent = _pids_parent()
    return ProcessLimitMode("cgroup", parent) if parent is not None else ProcessLimitMode("none")


def _pids_parent() -> Path | None:
    """A directory of the pids controller where this process may create cgroups."""
    try:
        memberships = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in memberships:
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and controllers == "":
            found = _v2_parent(mounts, path)
        elif "pids" in controllers.split(","):
            found = _v1_parent(mounts, path)
        else:
            continue
        if found is not None:
            return found
    return None


def _mount_points(mounts: list[str], fstype: str, option: str | None = None) -> list[Path]:
    points = []
    for line in mounts:
        fields = line.split()
        if "-" not in fields:
            continue
        dash = fields.index("-")
        kind, options = fields[dash + 1], fields[-1].split(",")
        if kind == fstype and (option is None or option in options):
            points.append(Path(fields[4]))
    return points


def _v2_parent(mounts: list[str], path: str) -> Path | None:
    for point in _mount_points(mounts, "cgroup2"):
        directory = point / path.lstrip("/")
        try:
            if "pids" not in (directory / "cgroup.controllers").read_text().split():
                continue
            enabled = (directory / "cgroup.subtree_control").read_text().split()
            if "pids" not in enabled:
                (directory / "cgroup.subtree_control").write_text("+pids")
        except OSError:
            continue
        if _writable(directory):
            return directory
    return None


def _v1_parent(mounts: list[str], path: str) -> Path | None:
    for point in _mount_points(mounts, "cgroup", "pids"):
        directory = point / path.lstrip("/")
        if _writable(directory):
            return directory
    return None


def _writable(directory: Path) -> bool:
    probe = directory / f"{PREFIX}probe-{os.getpid()}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return False
    return True


def create(limit: int) -> Path | None:
    """A new cgroup allowing ``limit`` processes, for one sandbox (``None`` where this
    runtime does not use cgroups, or making it failed — the sandbox then runs without
    it and the failure is the caller's to report)."""
    mode = process_limit_mode()
    if mode.kind != "cgroup" or mode.parent is None:
        return None
    path = mode.parent / f"{PREFIX}{os.getpid()}-{next(_counter)}"
    try:
        path.mkdir()
        (path / "pids.max").write_text(str(limit))
    except OSError:
        with contextlib.suppress(OSError):
            path.rmdir()
        return None
    return path


def enter(pid: int) -> Path | None:
    """Move process ``pid`` — one that has started nothing yet — into a new cgroup of
    its own that allows it alone (:func:`allow` raises that); ``None`` as for
    :func:`create`.

    Blocking: moving a process waits for the kernel (an RCU grace period, ~10 ms and
    more on a busy machine), so it is done ahead of time, in a thread
    (:mod:`.pool`).

    :raises OSError: when the process cannot be moved (the cgroup is removed again).
    """
    path = create(1)
    if path is None:
        return None
    try:
        (path / "cgroup.procs").write_text(str(pid))
    except OSError:
        with contextlib.suppress(OSError):
            path.rmdir()
        raise
    return path


def allow(path: Path | None, limit: int) -> None:
    """Let cgroup ``path`` hold ``limit`` processes (``0``: no limit)."""
    if path is not None:
        (path / "pids.max").write_text(str(limit) if limit else "max")


def remove_soon(path: Path | None) -> None:
    """Remove the sandbox's cgroup once its last process is gone — in a thread, in the
    background: the processes of a PID namespace are reaped just after its first one,
    and removing a cgroup waits while a process is being moved into another (the kernel
    holds its cgroup lock through that RCU grace period): the call need not wait for
    either. One left behind is removed by :func:`sweep`."""
    if path is not None:
        asyncio.get_running_loop().run_in_executor(None, remove, path)


def remove(path: Path, wait_seconds: float = 5.0) -> None:
    """Remove cgroup ``path`` once it is empty, waiting up to ``wait_seconds`` for its
    processes to be gone (blocking; one left is removed by :func:`sweep`)."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() >= deadline:
                return
        time.sleep(0.01)


def sweep() -> int:
    """At start-up: kill what is left in the sandbox cgroups of runtimes that are gone
    and remove them (one whose processes are not reaped yet is removed by a later
    sweep); return how many such cgroups were found."""
    mode = process_limit_mode()
    if mode.kind != "cgroup" or mode.parent is None:
        return 0
    found = 0
    for path in mode.parent.glob(f"{PREFIX}*"):
        owner = path.name[len(PREFIX) :].partition("-")[0]
        if not owner.isdigit() or _alive(int(owner)):
            continue
        found += 1
        with contextlib.suppress(OSError):
            for pid in (path / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(pid), signal.SIGKILL)
        with contextlib.suppress(OSError):
            path.rmdir()
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's: alive
        return True
    return True
