"""CPU time of another process, read off Linux's ``/proc``: what a bench's server or
helper process used while the bench's own client ran beside it."""

from __future__ import annotations

import os
from pathlib import Path


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) process ``pid`` has used so far; ``None`` when it cannot
    be read (gone, or not Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
