"""Running the real ``toolang`` command in a subprocess from a test."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def run_toolang(
    *args: str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    pythonpath: list[Path] | None = None,
    timeout: float = 60,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m toolang_core ARGS`` in ``cwd`` and capture its output.

    The test's own ``TOOLANG_*`` variables are left out; ``env`` is laid over the rest
    and ``pythonpath`` put in front of ``PYTHONPATH`` (e.g. a directory of made-up
    distributions); ``input`` is its standard input. Never raises for a non-zero exit:
    check ``returncode``."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    full_env.update(env or {})
    if pythonpath:
        existing = full_env.get("PYTHONPATH")
        full_env["PYTHONPATH"] = os.pathsep.join(
            [*(str(p) for p in pythonpath), *([existing] if existing else [])]
        )
    return subprocess.run(
        [sys.executable, "-m", "toolang_core", *args],
        cwd=cwd,
        env=full_env,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    """Fail when the command printed a Python traceback: errors are for people."""
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout, result.stdout
