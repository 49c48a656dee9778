"""Running a script in a new interpreter whose bytecode (and so what the plugin keeps
beside it, :class:`toolang_core.KeptFiles`) goes under a folder of the test's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def run_kept(script: str, prefix: Path, **env: str) -> dict[str, object]:
    """``script``'s last line of output, a JSON object, from an interpreter that writes
    bytecode (as a user's does) under ``prefix``; ``env`` added to its environment."""
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environ.update(PYTHONPYCACHEPREFIX=str(prefix), **env)
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.splitlines()[-1]))


def kept_files(prefix: Path, kind: str) -> list[Path]:
    """The files kept under ``prefix`` in folders of ``kind``."""
    return sorted(p for p in prefix.rglob(f"{kind}.*/*") if p.is_file())
