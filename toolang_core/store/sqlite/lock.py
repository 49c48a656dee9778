"""The embedded store admits one runtime at a time: an OS lock the kernel frees with
the process.

On Linux the lock is an exclusive ``flock`` on the **database file itself**: deleting
any other file (the ``<db>.lock`` note included) cannot let a second runtime in, and
SQLite's own locks (POSIX byte-range locks, which Linux keeps apart from ``flock``) are
untouched. Elsewhere — where ``flock`` and SQLite's locks would collide — the lock is
taken on ``<db>.lock``. Either way ``<db>.lock`` holds a note of who holds the store
(pid, run), for the messages of those who wait.

A descriptor of the database file is never closed: closing *any* descriptor of a file
drops every POSIX lock the process holds on it — SQLite's included (SQLite itself never
closes one while it holds a lock). So each process keeps one descriptor per database
file and purpose, and unlocks with ``LOCK_UN``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Final

import structlog

from toolang_core.store.errors import StoreBusy

log = structlog.get_logger("toolang.store")

LOCK_THE_DATABASE: Final = sys.platform.startswith("linux")
"""Whether the lock is taken on the database file (see the module's docstring)."""

_Key = tuple[str, int, int, bool]
_FREE: dict[_Key, list[int]] = {}
"""(path, device, inode, writable) → descriptors this process keeps open for good, unlocked now."""
_KEYS: dict[int, _Key] = {}
_GUARD = threading.Lock()


def _take(path: Path, *, create: bool) -> int:
    """A descriptor of ``path`` of its own open file (``flock`` locks belong to an open
    file: two holders in one process must not share one), reused from those given back.
    A file replaced under the same name gets new ones."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        pass
    else:
        with _GUARD:
            free = _FREE.get((str(path), found.st_dev, found.st_ino, create))
            if free:
                return free.pop()
    fd = os.open(path, os.O_RDWR | os.O_CREAT if create else os.O_RDONLY, 0o644)
    opened = os.fstat(fd)
    with _GUARD:
        _KEYS[fd] = (str(path), opened.st_dev, opened.st_ino, create)
    return fd


def _give_back(fd: int) -> None:
    """Unlock ``fd`` and keep it for the next :func:`_take` (never closed: see above)."""
    with _GUARD:
        key = _KEYS.get(fd)
        if key is None:  # taken before this process was forked: not ours to unlock
            return
        fcntl.flock(fd, fcntl.LOCK_UN)
        _FREE.setdefault(key, []).append(fd)


def _forget_in_child() -> None:
    """A forked child shares its parent's open files, locks included: it closes its
    copies (the parent's lock stays; the child holds no POSIX lock yet to lose)."""
    global _GUARD  # noqa: PLW0603 - one a parent's thread held at the fork stays held
    _GUARD = threading.Lock()
    for fd in list(_KEYS):
        with contextlib.suppress(OSError):
            os.close(fd)
    _KEYS.clear()
    _FREE.clear()


os.register_at_fork(after_in_child=_forget_in_child)


class RuntimeLock:
    """Held by the runtime for its whole life; the kernel frees it when the process dies."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self.path = db_path.with_name(db_path.name + ".lock")
        """The note of the holder (and the lock itself where the database cannot be)."""
        self.target = db_path if LOCK_THE_DATABASE else self.path
        self._fd: int | None = None
        self._run_id = ""

    def acquire(self, run_id: str, *, wait_seconds: float = 0.0) -> None:
        """Take the lock, waiting up to ``wait_seconds`` for its holder to let go.

        :raises StoreBusy: naming the runtime that holds the store.
        """
        fd = _take(self.target, create=True)
        deadline = time.monotonic() + wait_seconds
        while not self._try_lock(fd):
            if time.monotonic() >= deadline:
                _give_back(fd)
                holder = self.holder()
                raise StoreBusy(
                    f"another toolang runtime ({holder}) is using {self.db_path}; stop it "
                    "first, or point [store] path at another file",
                    holder=holder,
                )
            time.sleep(0.05)
        self._fd = fd
        self._run_id = run_id
        self._write_note(run_id)

    def keep_note(self) -> None:
        """Write the holder's note again if someone deleted it (called on heartbeats),
        so those who wait can still be told who holds the store."""
        if self._fd is not None and self._run_id and not self.path.exists():
            self._write_note(self._run_id)

    def _write_note(self, run_id: str) -> None:
        note = json.dumps({"pid": os.getpid(), "run_id": run_id}).encode()
        if self._fd is not None and self.target == self.path:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, note, 0)
            return
        try:  # only a note: the lock is on the database
            tmp = self.path.with_name(self.path.name + f".{os.getpid()}")
            tmp.write_bytes(note)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("store.lock_note_failed", path=str(self.path), error=str(exc))

    def holder(self) -> str:
        """Who holds the store, from the note: ``pid N, run R`` (or why it is unknown)."""
        try:
            info = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return f"unknown process: its note {self.path} is gone"
        except (OSError, ValueError):
            return "unknown process"
        if not isinstance(info, dict):
            return "unknown process"
        return f"pid {info.get('pid')}, run {info.get('run_id')}"

    def holder_pid(self) -> int | None:
        """The pid in the holder's note, or ``None`` when there is no readable note."""
        try:
            info = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return None
        pid = info.get("pid") if isinstance(info, dict) else None
        return pid if isinstance(pid, int) and pid > 0 else None

    @staticmethod
    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def held_by_someone(self) -> bool:
        """Whether some process holds the lock right now (without taking it)."""
        if not self.target.exists():
            return False
        fd = _take(self.target, create=False)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            _give_back(fd)
        return False

    def release(self) -> None:
        if self._fd is not None:
            _give_back(self._fd)
            self._fd = None
