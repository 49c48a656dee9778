"""The embedded store admits one runtime at a time: an exclusive lock on ``<db>.lock``."""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

from toolang_core.store.errors import StoreBusy


class RuntimeLock:
    """Held by the runtime for its whole life; the kernel frees it when the process dies."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path.with_name(db_path.name + ".lock")
        self._fd: int | None = None

    def acquire(self, run_id: str, *, wait_seconds: float = 0.0) -> None:
        """Take the lock, waiting up to ``wait_seconds`` for its holder to let go
        (a one-shot ``toolang chat`` or ``invoke`` holds it only for its one turn).

        :raises StoreBusy: naming the runtime that holds the store.
        """
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + wait_seconds
        while not self._try_lock(fd):
            if time.monotonic() >= deadline:
                holder = os.pread(fd, 512, 0).decode(errors="replace")
                os.close(fd)
                raise StoreBusy(
                    f"another toolang runtime ({_describe(holder)}) is using "
                    f"{self.path.with_suffix('')}; stop it first, or point [store] path at "
                    "another file"
                )
            time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "run_id": run_id}).encode(), 0)
        self._fd = fd

    @staticmethod
    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def held_by_someone(self) -> bool:
        """Whether some process holds the lock right now (without taking it)."""
        if not self.path.exists():
            return False
        fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _describe(holder: str) -> str:
    try:
        info = json.loads(holder)
    except ValueError:
        return "unknown process"
    return f"pid {info.get('pid')}, run {info.get('run_id')}"
