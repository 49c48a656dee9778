"""A started process dies with the runtime: ``PR_SET_PDEATHSIG`` armed in the child.

A leaf of both the sandbox (its waiting bubblewraps) and the tools' process code (an
unsandboxed program's group), so neither imports the other for it."""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, Final

_PR_SET_PDEATHSIG: Final = 1


def die_with_runtime() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the new process die (``SIGKILL``) with the thread that
    starts it; ``None`` where the kernel offers no such thing (not Linux).

    It only calls an already loaded ``prctl`` and ``getppid`` (safe after a fork), and
    exits at once when the runtime died before the setting took hold."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the runtime died between fork and prctl
            os._exit(137)

    return arm


@functools.cache
def _prctl() -> Any:
    """libc's ``prctl``, loaded once, before any fork (``None`` off Linux)."""
    if sys.platform != "linux":
        return None
    import ctypes  # here, not at import: a process that starts no program never needs it

    try:
        function = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, *[ctypes.c_ulong] * 4]
    function.restype = ctypes.c_int
    return function
