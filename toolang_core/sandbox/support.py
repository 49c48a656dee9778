"""Whether this machine can sandbox programs: bubblewrap is installed and really creates
its namespaces here (a container or a kernel setting may forbid them).

Looked at once per process — the first program a tool starts pays a few milliseconds —
and reported by ``toolang doctor``, ``toolang run``'s start-up line and the console.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Final

import attrs

from toolang_core.sandbox.bwrap import bwrap_argv, hidden_entries, process_count_argv
from toolang_core.sandbox.cgroup import process_limit_mode
from toolang_core.sandbox.policy import SandboxPolicy

if TYPE_CHECKING:
    from toolang_core.config.model import ToolsConfig

INSTALL_HINT: Final = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
OFF_WARNING: Final = (
    'the tool sandbox is OFF ([tools] sandbox = "off"): programs tools start run with all '
    "of the runtime's powers — its files, its store, its network, other owners' work"
)
"""What ``toolang run``, ``toolang doctor`` and the console say (in red) while the
sandbox is off."""


@attrs.frozen
class SandboxSupport:
    """What this machine offers: ``problem`` is ``None`` when programs can be sandboxed,
    else why not (with what to do). ``bwrap`` is the bubblewrap found; ``version`` what
    it says it is; ``process_limit`` how ``max_processes`` is enforced here."""

    problem: str | None
    bwrap: str | None = None
    version: str = ""
    process_limit: str = ""
    prlimit: str = "prlimit"
    disable_userns: bool = True
    """Whether this bubblewrap can keep programs from creating user namespaces (0.8+)."""

    @property
    def available(self) -> bool:
        return self.problem is None

    def describe(self) -> str:
        """One line for a person."""
        if self.problem is not None:
            return f"no sandbox available: {self.problem}"
        older = "" if self.disable_userns else " (before 0.8: programs may create user namespaces)"
        return f"{self.version or 'bubblewrap'} at {self.bwrap}{older}; {self.process_limit}"


def sandbox_warning(tools: ToolsConfig) -> str | None:
    """What a person must be told about the tool sandbox under ``tools`` (``[tools]``),
    or ``None`` when it is on and available: that it is off (:data:`OFF_WARNING`), or
    that it is required and missing here — tools' programs are then refused. Probes
    this machine once (:func:`sandbox_support`)."""
    if tools.sandbox == "off":
        return OFF_WARNING
    found = sandbox_support()
    if found.available:
        return None
    return f"no tool sandbox here, so tools' programs are refused: {found.problem}"


def find_bwrap() -> str | None:
    """bubblewrap on ``PATH``, else in ``/usr/bin`` (a service's ``PATH`` may be short)."""
    found = shutil.which("bwrap")
    if found:
        return found
    fallback = Path("/usr/bin/bwrap")
    return str(fallback) if os.access(fallback, os.X_OK) else None


@functools.cache
def sandbox_support() -> SandboxSupport:
    """Probe once per process (see the module docstring); never raises."""
    if sys.platform != "linux":
        return SandboxSupport(
            f"the sandbox needs Linux (bubblewrap); this is {sys.platform}. Set [tools] "
            'sandbox = "off" to run tools\' programs unsandboxed, knowing what that means'
        )
    bwrap = find_bwrap()
    if bwrap is None:
        return SandboxSupport(f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}")
    prlimit = shutil.which("prlimit") or "/usr/bin/prlimit"
    if not os.access(prlimit, os.X_OK):
        return SandboxSupport(
            "prlimit (util-linux) is not installed: apt-get install util-linux", bwrap
        )
    version = _version(bwrap)
    problem = _try(bwrap, prlimit, disable_userns=True)
    disable_userns = problem is None or "--disable-userns" not in problem
    if not disable_userns:  # an older bubblewrap: the rest of the sandbox holds
        problem = _try(bwrap, prlimit, disable_userns=False)
    if problem is not None:
        return SandboxSupport(problem, bwrap, version)
    mode = process_limit_mode().describe()
    return SandboxSupport(None, bwrap, version, mode, prlimit, disable_userns)


def _try(bwrap: str, prlimit: str, *, disable_userns: bool) -> str | None:
    """Start ``true`` in a sandbox like a tool's; ``None`` when it ran."""
    with tempfile.TemporaryDirectory(prefix="toolang-probe-") as scratch:
        policy = SandboxPolicy(mode="required", workdir=Path(scratch))
        argv = bwrap_argv(
            bwrap,
            policy,
            [*process_count_argv(9, prlimit=prlimit), "true"],
            hidden=hidden_entries([Path("/run")]),
            cwd=Path(scratch),
            disable_userns=disable_userns,
        )
        try:
            ran = subprocess.run(
                argv, env={"PATH": "/usr/bin:/bin"}, capture_output=True, timeout=30, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bubblewrap ({bwrap}) could not be run: {exc}"
    if ran.returncode == 0:
        return None
    said = ran.stderr.decode(errors="replace").strip() or f"exit status {ran.returncode}"
    return (
        f"bubblewrap ({bwrap}) cannot create its namespaces here: {said}. Allow "
        "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on "
        "Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor "
        "profile for bwrap), or in a container run it with user namespaces allowed"
    )


def _version(bwrap: str) -> str:
    try:
        out = subprocess.run([bwrap, "--version"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.decode(errors="replace").strip()
