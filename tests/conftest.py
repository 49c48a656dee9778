"""Shared helpers for the core's own tests (plugin authors use the toolang_* fixtures)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from toolang_core.testing.cli import run_toolang

pytest_plugins = ["pytester"]


@pytest.fixture
def cli_run(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``cli_run(*args, env=…, pythonpath=…)`` runs the CLI in ``tmp_path``."""

    def run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        kwargs.setdefault("cwd", tmp_path)
        return run_toolang(*args, **kwargs)  # type: ignore[arg-type]

    return run
