"""Start a stdio MCP server so that it dies with the runtime.

Run as ``python -m toolang_tools_mcp.launcher <command> [args…]``: it arms
``PR_SET_PDEATHSIG`` (``SIGKILL`` when the thread that started it ends — the runtime's
event loop, or the runtime itself killed with ``SIGKILL``) and then becomes the server
(``exec``), so no server outlives its runtime. The SDK starts this launcher; it cannot
be given a ``preexec_fn``.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write("usage: python -m toolang_tools_mcp.launcher <command> [args...]\n")
        return 2
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the runtime died before the setting took hold
            return 137
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"cannot start MCP server {argv[0]!r}: {exc}\n")
        return 127


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
