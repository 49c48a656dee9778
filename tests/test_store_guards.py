"""The embedded store guards itself against its files being tampered with under a running
runtime — real `toolang run` processes, real files:

- exclusivity is an OS lock on the database file: deleting `<db>.lock` lets no second
  runtime in, and a second `toolang run` says at once that it waits, and for whom;
- a database, `-wal` or `-shm` deleted under a running runtime stops it loudly, and no
  acknowledged request is lost silently (each is in the live files or in the rescue copy
  the runtime made of what it saw).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolang_core.store.errors import StoreBusy
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.testing.cli import run_toolang

CONFIG = """
[runtime]
executor = "echo"
poll_seconds = 0.05
lease_seconds = 1.5
shutdown_grace_seconds = 0
"""


class Runtime:
    """One `toolang run --no-sources` process; its stderr is read line by line."""

    def __init__(self, home: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
        env["TOOLANG_LOAD_PLUGINS"] = ""  # the echo executor needs no plugin
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "toolang_core", "--log-format", "json", "run", "--no-sources"],
            cwd=home,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []

    def wait_for_line(self, needle: str, timeout: float = 30) -> str:
        """The first stderr line holding ``needle`` (reads as the process writes)."""
        assert self.proc.stderr is not None
        deadline = time.monotonic() + timeout
        for line in self.lines:
            if needle in line:
                return line
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.lines.append(line)
            if needle in line:
                return line
        raise AssertionError(f"no {needle!r} on stderr: {''.join(self.lines)}")

    def stop(self) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        _, rest = self.proc.communicate(timeout=60)
        return self.proc.returncode, "".join(self.lines) + rest


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "toolang.toml").write_text(CONFIG)
    return tmp_path


@pytest.fixture
def runtimes() -> Iterator[list[Runtime]]:
    started: list[Runtime] = []
    yield started
    for runtime in started:
        if runtime.proc.poll() is None:
            runtime.proc.kill()
            runtime.proc.communicate(timeout=30)


def start(home: Path, runtimes: list[Runtime]) -> Runtime:
    runtime = Runtime(home)
    runtimes.append(runtime)
    return runtime


def submit(home: Path, text: str) -> subprocess.CompletedProcess[str]:
    return run_toolang(
        "submit", text, "--thread", f"chat:{text}", cwd=home, env={"TOOLANG_LOAD_PLUGINS": ""}
    )


def test_deleting_the_lock_file_lets_no_second_runtime_in(home, runtimes):
    first = start(home, runtimes)
    started = json.loads(first.wait_for_line('"runtime.started"'))
    db = home / ".toolang" / "toolang.db"
    note = home / ".toolang" / "toolang.db.lock"
    note.unlink()

    with pytest.raises(StoreBusy, match="another toolang runtime"):
        SQLiteStore(db).acquire("intruder")
    second = start(home, runtimes)
    second.wait_for_line("runtime.waiting_for_store")
    # The first rewrites its note at its next heartbeat: waiters are told who holds it.
    wait_for_file = time.monotonic() + 10
    while not note.exists():
        assert time.monotonic() < wait_for_file, "the note was not written again"
        time.sleep(0.05)
    assert json.loads(note.read_text())["run_id"] == started["run"]
    # It waits: it never started, and never recovered the first runtime's turns.
    assert second.proc.poll() is None
    assert not any("runtime.started" in line for line in second.lines)
    store = SQLiteStore(db, read_only=True)
    assert [r.id for r in store.list_runs() if r.status == "running"] == [started["run"]]
    store.close()
    code, err = second.stop()  # a signal ends the wait at once
    assert code == 0, err
    assert "runtime.started" not in err
    code, err = first.stop()
    assert code == 0, err


def test_a_second_run_says_at_once_that_it_waits_and_for_whom(home, runtimes):
    first = start(home, runtimes)
    started = json.loads(first.wait_for_line('"runtime.started"'))
    second = start(home, runtimes)
    waiting = json.loads(second.wait_for_line("runtime.waiting_for_store"))
    assert second.proc.poll() is None  # said while waiting, not once it gave up
    assert waiting["level"] == "warning"
    assert waiting["holder"] == f"pid {first.proc.pid}, run {started['run']}"
    assert waiting["wait_seconds"] == 30
    assert "waiting up to 30 s for it to stop" in waiting["detail"]
    assert "--wait 0 fails at once" in waiting["detail"]
    assert waiting["store"].endswith("toolang.db")

    code, err = first.stop()
    assert code == 0, err
    second.wait_for_line('"runtime.started"')  # the holder let go: it takes over
    code, err = second.stop()
    assert code == 0, err


def test_a_second_run_told_not_to_wait_fails_at_once_naming_the_holder(home, runtimes):
    first = start(home, runtimes)
    started = json.loads(first.wait_for_line('"runtime.started"'))
    env = {"TOOLANG_LOAD_PLUGINS": ""}
    second = run_toolang("--log-format", "json", "run", "--wait", "0", cwd=home, env=env)
    assert second.returncode == 4, second.stderr
    assert "runtime.waiting_for_store" not in second.stderr  # it did not wait
    assert f"(pid {first.proc.pid}, run {started['run']}) is using" in second.stderr
    waited = run_toolang("--log-format", "json", "run", "--wait", "0.5", cwd=home, env=env)
    assert waited.returncode == 4, waited.stderr
    assert "waiting up to 0.5 s" in waited.stderr
    assert "(waited 0.5 s)" in waited.stderr
    assert first.proc.poll() is None  # the holder goes on


@pytest.mark.parametrize("deleted", [("-wal", "-shm"), ("",)], ids=["wal-and-shm", "database"])
def test_files_deleted_under_a_running_runtime_stop_it_and_lose_no_acknowledged_request(
    home, runtimes, deleted
):
    runtime = start(home, runtimes)
    runtime.wait_for_line('"runtime.started"')
    db = home / ".toolang" / "toolang.db"
    acknowledged = []
    for n in range(4):
        result = submit(home, f"before-{n}")
        assert result.returncode == 0, result.stderr
        acknowledged.append(json.loads(result.stdout)["id"])

    for suffix in deleted:
        Path(f"{db}{suffix}").unlink()
    refused = 0
    for n in range(40):  # submitting goes on while the runtime notices
        if runtime.proc.poll() is not None:
            break
        result = submit(home, f"after-{n}")
        if result.returncode == 0:
            acknowledged.append(json.loads(result.stdout)["id"])
        else:
            refused += 1
            assert "Traceback" not in result.stderr
            if deleted == ("",):  # never a new database under the old log
                assert "is missing but its log" in result.stderr, result.stderr
    code, err = runtime.stop()

    assert code == 4, err  # a store error, loudly
    # deleted — or already replaced: a submitting process made a new one meanwhile
    gone = re.escape(f"{db}{deleted[0]}")
    assert re.search(
        rf"error: {gone} was (deleted|replaced by another file) while this runtime was using it",
        err,
    ), err
    assert "Traceback" not in err
    rescued = sorted(db.parent.glob("toolang.db.rescued-*"))
    assert len(rescued) == 1, err
    assert str(rescued[0]) in err

    def ids_in(path: Path) -> set[str]:
        if not path.exists():  # every submit after the deletion was refused
            return set()
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            return {row[0] for row in conn.execute("SELECT id FROM turn_requests")}
        finally:
            conn.close()

    kept = ids_in(db) | ids_in(rescued[0])
    assert [i for i in acknowledged if i not in kept] == []


def crash_after_a_write(db: Path) -> None:
    """A process that wrote into ``db`` and died without closing it: its ``-wal`` and
    ``-shm`` stay beside the database."""
    code = f"""
import os, time
from pathlib import Path
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, SubmitRules
store = SQLiteStore(Path({str(db)!r}))
store.submit(NewTurnRequest(source="chat", thread_id="chat:1", input="kept"),
             SubmitRules("chat", 10), now=time.time())
os._exit(0)
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert db.with_name("toolang.db-wal").exists()


def test_a_log_left_without_its_database_is_moved_aside_once_its_runtime_is_gone(home):
    """The database deleted, its runtime gone: the next process keeps the orphaned
    ``-wal``/``-shm`` beside it under another name and begins a new store (opening a
    new file under the old log would read the old pages through it)."""
    db = home / ".toolang" / "toolang.db"
    crash_after_a_write(db)
    wal = db.with_name("toolang.db-wal")
    log_bytes = wal.read_bytes()
    db.unlink()
    (db.parent / "toolang.db.lock").write_text(json.dumps({"pid": 999_999_999, "run_id": "r"}))

    result = submit(home, "new")

    assert result.returncode == 0, result.stderr
    moved = sorted(db.parent.glob("toolang.db-wal.orphaned-*"))
    assert len(moved) == 1 and moved[0].read_bytes()[:32] == log_bytes[:32]
    assert "store.orphaned_log_moved" in result.stderr
    new = sqlite3.connect(db)
    assert [row[0] for row in new.execute("SELECT input FROM turn_requests")] == ["new"]
    new.close()


def test_a_log_without_its_database_is_never_reused_while_its_runtime_runs(home):
    db = home / ".toolang" / "toolang.db"
    crash_after_a_write(db)
    db.unlink()
    (db.parent / "toolang.db.lock").write_text(json.dumps({"pid": os.getpid(), "run_id": "r"}))

    result = submit(home, "new")

    assert result.returncode == 4, result.stderr
    assert f"{db} is missing but its log" in result.stderr
    assert f"runtime (pid {os.getpid()})" in result.stderr
    assert "Traceback" not in result.stderr
    assert not db.exists()  # nothing was created under the old log


def test_doctor_reports_a_store_with_corrupted_pages(home):
    db = home / ".toolang" / "toolang.db"
    store = SQLiteStore(db)
    from toolang_core.store.types import NewTurnRequest, SubmitRules

    for n in range(400):  # enough rows for many pages of the table and its indexes
        store.submit(
            NewTurnRequest(source="chat", thread_id=f"chat:{n}", input="x" * 200),
            SubmitRules("chat", 10),
            now=time.time(),
        )
    store.close()
    healthy = run_toolang("doctor", cwd=home, env={"TOOLANG_LOAD_PLUGINS": ""})
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    assert "passes PRAGMA quick_check" in healthy.stdout

    page = sqlite3.connect(db).execute("PRAGMA page_size").fetchone()[0]
    pages = db.stat().st_size // page
    with db.open("r+b") as f:  # scribble over three pages in the middle (page 1 intact)
        for number in (pages // 2, pages // 2 + 1, pages - 2):
            f.seek(number * page + 16)
            f.write(os.urandom(page - 32))

    result = run_toolang("doctor", cwd=home, env={"TOOLANG_LOAD_PLUGINS": ""})
    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    (line,) = [ln for ln in result.stdout.splitlines() if "PRAGMA quick_check found" in ln]
    assert str(db) in line and "is damaged" in line
