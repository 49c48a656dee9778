"""Shared helpers for the core's own tests (plugin authors use the toolang_* fixtures)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


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


@pytest.fixture
def cli_run(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``cli_run(*args, env=…, pythonpath=…)`` runs the CLI in ``tmp_path``."""

    def run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        kwargs.setdefault("cwd", tmp_path)
        return run_toolang(*args, **kwargs)  # type: ignore[arg-type]

    return run


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout, result.stdout
