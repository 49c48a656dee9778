"""Hints for a newcomer: how to reach this ``toolang`` from another terminal."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def path_hint() -> str | None:
    """How to put this ``toolang`` on PATH, or ``None`` when the shell already finds
    it (or it runs as ``python -m toolang_core``, with no script to point at)."""
    if not sys.argv or not sys.argv[0]:
        return None
    here = Path(os.path.abspath(sys.argv[0]))
    if here.name != "toolang":
        return None
    found = shutil.which("toolang")
    if found and Path(found).resolve() == here.resolve():
        return None
    activate = here.parent / "activate"
    if activate.exists():
        return f"source {os.path.relpath(activate)}"
    return f"use {here}"
