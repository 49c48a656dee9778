"""Helpers for tests that run the real ``toolang`` CLI in a subprocess.

(A module of its own, not conftest: the integration env collects every plugin's tests
in one session, and ``from cli_helpers import …`` would find another directory's conftest.)
"""

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
) -> subprocess.CompletedProcess[str]:
    """Run the real ``toolang`` CLI in a subprocess and capture its output."""
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
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout, result.stdout
