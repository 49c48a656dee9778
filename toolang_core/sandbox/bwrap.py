"""bubblewrap's command line for a :class:`~toolang_core.sandbox.policy.SandboxPolicy`.

What the program gets:

- new user, PID, IPC, UTS, network and (where the kernel has one) cgroup namespaces;
  it cannot create more user namespaces; every capability dropped;
- ``--die-with-parent`` (bwrap's first process goes when the runtime does, and with it
  the whole PID namespace) and ``--new-session`` (no ``TIOCSTI`` into a terminal);
- the root file system read-only, a fresh ``/proc`` (its own processes only), a minimal
  ``/dev``, a private ``/tmp``; the working directory the one writable place;
- hidden paths: a directory is covered with an empty read-only tmpfs, a file with
  ``/dev/null`` — hidden paths *around* the working directory are covered before it is
  mounted (it shows through), those *inside* it after (they stay hidden); the policy's
  ``read_only`` and ``writable`` places are mounted after those, and what is hidden
  inside them hidden again;
- the limits: CPU time, address space and file size of each process set on
  bubblewrap before it starts anything (every process of the sandbox inherits them);
  the number of processes by ``prlimit`` inside the user namespace, or by a pids cgroup
  for a runtime running as root (:mod:`.cgroup`).

:func:`bwrap_options` and :func:`bwrap_argv` are pure: the file system is looked at by
:func:`hidden_entries`.
"""

from __future__ import annotations

import functools
import os
import resource
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from toolang_core.sandbox.policy import SandboxPolicy
from toolang_core.sandbox.rules import Hidden, ProcessLimits

PROXY_SOCKET: Final = "/run/toolang/proxy.sock"
"""Inside the sandbox: the runtime's network proxy (``network = "allow"``)."""
BRIDGE_SCRIPT: Final = "/run/toolang/bridge.py"
"""Inside the sandbox: the bridge from a loopback port to :data:`PROXY_SOCKET`."""
PROXY_PORT: Final = 3128
"""The loopback port (of the sandbox's own network namespace) the bridge listens on."""

_MB: Final = 1024 * 1024


def hidden_entries(paths: Iterable[Path]) -> list[Hidden]:
    """The paths of ``paths`` that exist, with their kind (symbolic links followed:
    bubblewrap mounts on what a link points to)."""
    found = []
    for path in paths:
        try:
            real = Path(os.path.realpath(path))
            is_dir = real.is_dir()
            exists = is_dir or real.exists()
        except OSError:
            continue
        if exists:
            found.append(Hidden(real, is_dir))
    return found


def resource_limits(limits: ProcessLimits) -> list[tuple[int, int]]:
    """``(resource, value)`` pairs of the per-process limits (``RLIMIT_CPU``,
    ``RLIMIT_AS``, ``RLIMIT_FSIZE``; a limit of ``0`` is left out). Set before bubblewrap
    starts, they hold for every process of the sandbox."""
    chosen = [
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_AS, limits.address_space_mb * _MB),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * _MB),
    ]
    return [(kind, value) for kind, value in chosen if value]


def process_count_argv(count: int, *, prlimit: str = "prlimit") -> list[str]:
    """``prlimit`` setting ``RLIMIT_NPROC`` to ``count``, run inside the sandbox's user
    namespace (set before it exists, the limit would also count every process of the
    user on the machine); ``[]`` for no limit."""
    return [prlimit, f"--nproc={count}:{count}", "--"] if count else []


def bwrap_argv(
    bwrap: str,
    policy: SandboxPolicy,
    command: Sequence[str],
    *,
    hidden: Sequence[Hidden],
    cwd: Path,
    binds: Sequence[tuple[Path, str]] = (),
    disable_userns: bool = True,
    share_network: bool = False,
) -> list[str]:
    """The whole command line: ``bwrap <options> -- <command>`` (the options are
    :func:`bwrap_options`'s)."""
    options = bwrap_options(
        policy,
        hidden=hidden,
        cwd=cwd,
        binds=binds,
        disable_userns=disable_userns,
        share_network=share_network,
    )
    return [bwrap, *options, "--", *command]


def bwrap_options(
    policy: SandboxPolicy,
    *,
    hidden: Sequence[Hidden],
    cwd: Path,
    binds: Sequence[tuple[Path, str]] = (),
    disable_userns: bool = True,
    share_network: bool = False,
) -> list[str]:
    """bubblewrap's options for ``policy`` (everything before ``--`` and the command).

    ``hidden`` are the policy's hidden paths that exist (:func:`hidden_entries`);
    ``cwd`` is where the program starts (inside the working directory, or any visible
    directory; absolute); ``binds`` are ``(host path, sandbox path)`` pairs mounted
    read-only after everything else (the proxy's socket, the bridge).
    ``disable_userns``: keep the program from creating user namespaces (bubblewrap 0.8
    and later). ``share_network``: keep the host's network namespace (no
    ``--unshare-net``) — for a program whose network is checked by its caller
    (:func:`toolang_core.sandbox.launch.sandbox_argv`).
    """
    workdir = policy.workdir
    argv = [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        *([] if share_network else ["--unshare-net"]),
        "--unshare-cgroup-try",
        *(["--disable-userns"] if disable_userns else []),
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--hostname",
        "toolang-sandbox",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
    ]
    around, within, sealed = _hidden_mounts(workdir, tuple(hidden))
    argv += [*around, "--bind", str(workdir), str(workdir), *within]
    extra = [*policy.read_only, *policy.writable]
    for path in policy.read_only:
        argv += ["--ro-bind", str(path), str(path)]
    for path in policy.writable:
        argv += ["--bind", str(path), str(path)]
    # what is hidden inside a place shown again stays hidden
    again = [h for h in hidden if any(_inside(h.path, place) for place in extra)]
    argv += _hide(again)
    if any(_inside(workdir, place) for place in extra):  # covered again: shown again
        argv += ["--bind", str(workdir), str(workdir), *within]
    sealed += tuple(arg for h in again if h.is_dir for arg in ("--remount-ro", str(h.path)))
    for source, target in binds:
        argv += ["--ro-bind", str(source), target]
    return [*argv, *sealed, "--chdir", str(cwd)]


@functools.lru_cache(maxsize=64)
def _hidden_mounts(
    workdir: Path, hidden: tuple[Hidden, ...]
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The options hiding ``hidden`` around the working directory (before it is
    mounted), within it (after), and sealing their tmpfs read-only — the same for every
    program of a policy, so worked out once (path arithmetic: ~0.5 ms a program)."""
    candidates = [h for h in hidden if h.path != workdir]
    around = [h for h in candidates if _inside(workdir, h.path)]
    within = [h for h in candidates if h not in around]
    kept = [h for h in candidates if not _covered(h, candidates, workdir)]
    # their tmpfs are written no more (the mount points are made)
    sealed = [arg for h in kept if h.is_dir for arg in ("--remount-ro", str(h.path))]
    return (
        tuple(_hide(h for h in kept if h in around)),
        tuple(_hide(h for h in kept if h in within)),
        tuple(sealed),
    )


def _hide(entries: Iterable[Hidden]) -> list[str]:
    argv: list[str] = []
    # Outer paths first: a tmpfs mounted over a directory covers what was mounted in it.
    for entry in sorted(entries, key=lambda e: len(e.path.parts)):
        if entry.is_dir:
            argv += ["--tmpfs", str(entry.path)]
        else:
            argv += ["--ro-bind", "/dev/null", str(entry.path)]
    return argv


def _covered(entry: Hidden, hidden: Sequence[Hidden], workdir: Path) -> bool:
    """Whether another hidden directory already covers ``entry`` (hiding it again is
    needless) — not when ``entry`` is in the working directory, which is mounted again
    on top of what covers it."""
    for other in hidden:
        if other is entry or not other.is_dir or not _inside(entry.path, other.path):
            continue
        if _inside(workdir, other.path) and _inside(entry.path, workdir):
            continue
        return True
    return False


def _inside(path: Path, ancestor: Path) -> bool:
    """Whether ``path`` is ``ancestor`` or below it."""
    return path == ancestor or ancestor in path.parents
