"""Shared helpers for the core's own tests (plugin authors use the toolang_* fixtures)."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from toolang_core.testing.cli import run_toolang

pytest_plugins = ["pytester"]

# Past releases' scaffolded plugins: their tests run against the current core in
# test_frozen_plugins.py, each installed as a distribution — never collected here.
collect_ignore = ["frozen_plugins"]

# Hypothesis's time-based checks (a 200 ms deadline per example, "input generation is
# slow") fail when the machine is busy, and a combined run makes it busy; what these
# properties check does not depend on speed, so the suite turns both off.
settings.register_profile("toolang", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("toolang")


@pytest.fixture(autouse=True)
def _root_logger_as_it_was():
    """A test that calls ``configure_logging`` adds a handler to the root logger (on
    its own stream), sets its level and captures warnings: all are put back after it."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(False)


@pytest.fixture
def cli_run(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``cli_run(*args, env=…, pythonpath=…)`` runs the CLI in ``tmp_path``."""

    def run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        kwargs.setdefault("cwd", tmp_path)
        return run_toolang(*args, **kwargs)  # type: ignore[arg-type]

    return run


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheelhouse built by tools/wheelhouse.py (a wheel and an sdist of the core and of
    every plugin, pins checked): built once per session — it takes about half a minute."""
    out = tmp_path_factory.mktemp("wheelhouse")
    tool = Path(__file__).resolve().parent.parent / "tools" / "wheelhouse.py"
    result = subprocess.run(
        [sys.executable, str(tool), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out
