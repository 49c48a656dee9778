"""The plugins' commands that open the store meet a damaged store file as the core's do
(tests/test_store_damage.py): exit 4, the advice `toolang doctor` gives, the file's bytes
unchanged — one-shot `chat` and `invoke`, `serve` and the task, chore, approval and
team commands, with every plugin installed and the starter configuration."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor

from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, SubmitRules
from toolang_core.testing.cli import run_toolang

COMMANDS = [
    ("chat", "hello"),
    ("chat", "--no-wait", "hello"),
    ("invoke", "hello"),
    ("serve", "--port", "0"),
    ("tasks", "add", "Write the notes", "--body", "x"),
    ("tasks", "list"),
    ("tasks", "runs"),
    ("chores", "list"),
    ("approvals", "list"),
    ("wills",),
    ("teams", "list"),
    ("teams", "show", "team-1"),
    ("teams", "disband", "team-1"),
]


def test_the_plugins_commands_exit_4_on_a_damaged_store_and_write_nothing(tmp_path):
    init = run_toolang("init", cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    db = tmp_path / ".toolang" / "toolang.db"
    store = SQLiteStore(db)
    store.submit(
        NewTurnRequest(source="chat", thread_id="cli:default", input="hi"),
        SubmitRules("chat", 10),
        now=time.time(),
    )
    store.close()
    conn = sqlite3.connect(db)
    (root,) = conn.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'turn_requests'"
    ).fetchone()
    (page,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with db.open("r+b") as f:  # the turn table's root: its one cell points off the page
        f.seek((root - 1) * page + 8)
        f.write(b"\xff\xff")
    before = hashlib.sha256(db.read_bytes()).hexdigest()

    def run(args: tuple[str, ...]):
        return args, run_toolang(*args, cwd=tmp_path, timeout=120)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(run, COMMANDS))
    for args, result in results:
        assert result.returncode == 4, (args, result.stdout, result.stderr)
        assert f"error: {db} is not a readable toolang store (" in result.stderr, args
        assert "restore it from a backup" in result.stderr, args
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
