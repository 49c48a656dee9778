"""A damaged store file: every command that opens the store exits 4 with the advice
`toolang doctor` gives, and none writes into the file — not a one-shot command, not
`toolang run` (real subprocesses, real damaged files: the header, or the root page of
the turn table, where every read and write of turns starts)."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from toolang_core.store.errors import StoreCorrupt
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, SubmitRules
from toolang_core.testing.cli import run_toolang

pytestmark = pytest.mark.slow  # many real CLI processes

CONFIG = '[runtime]\nexecutor = "echo"\n'
ENV = {"TOOLANG_LOAD_PLUGINS": ""}
ADVICE = "it was left untouched — restore it from a backup (or `sqlite3 "

COMMANDS = [
    ("status",),
    ("submit", "hello", "--thread", "chat:new"),
    ("cancel", "06h2aaaaaaaaaaaaaaaaaaaaaa"),
    ("turns", "list"),
    ("turns", "show", "06h2aaaaaaaaaaaaaaaaaaaaaa"),
    ("turns", "trace", "06h2aaaaaaaaaaaaaaaaaaaaaa"),
    ("threads", "list"),
    ("threads", "show", "chat:a"),
    ("agents", "pool"),
    ("run", "--until-idle", "--no-sources", "--wait", "0"),
]
"""Every command of the core that opens the store (plugins' commands: integration)."""


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def damage_header(db: Path) -> None:
    with db.open("r+b") as f:
        f.write(b"not a database!!")  # the 16-byte magic string


def damage_turn_table(db: Path) -> None:
    """Point every cell of the turn table's root page outside the page."""
    conn = sqlite3.connect(db)
    try:
        (root,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'turn_requests'"
        ).fetchone()
        (page,) = conn.execute("PRAGMA page_size").fetchone()
    finally:
        conn.close()
    with db.open("r+b") as f:
        f.seek((root - 1) * page + 3)
        cells = int.from_bytes(f.read(2), "big")
        assert cells > 0, "the turn table should hold the submitted turns"
        f.seek((root - 1) * page + 8)  # a leaf page's cell pointers
        f.write(b"\xff\xff" * cells)


@pytest.fixture(params=[damage_header, damage_turn_table], ids=["header", "turn-table-root"])
def damaged_home(request, tmp_path) -> tuple[Path, Path]:
    (tmp_path / "toolang.toml").write_text(CONFIG)
    db = tmp_path / ".toolang" / "toolang.db"
    store = SQLiteStore(db)
    for n in range(3):
        store.submit(
            NewTurnRequest(source="chat", thread_id=f"chat:{n}", input=f"turn {n}"),
            SubmitRules("chat", 10),
            now=time.time(),
        )
    store.close()  # the last connection copies the log in and removes it
    assert not db.with_name("toolang.db-wal").exists()
    request.param(db)
    return tmp_path, db


def test_every_command_that_opens_a_damaged_store_exits_4_with_the_advice_and_writes_nothing(
    damaged_home,
):
    home, db = damaged_home
    before = digest(db)

    def run(args: tuple[str, ...]):
        return args, run_toolang(*args, cwd=home, env=ENV, timeout=120)

    with ThreadPoolExecutor(4) as pool:  # none writes: they may run side by side
        results = list(pool.map(run, COMMANDS))
    for args, result in results:
        assert result.returncode == 4, (args, result.stdout, result.stderr)
        assert f"error: {db} is not a readable toolang store (" in result.stderr, args
        assert ADVICE in result.stderr, args
        assert "internal error" not in result.stderr, args
    assert digest(db) == before


def test_a_runtime_does_not_take_a_store_with_a_damaged_page_past_its_edges(tmp_path):
    """Damage the opening probe does not reach (a page inside the turn table) is found
    by the check before the first write: acquiring fails, and nothing was written."""
    sound = tmp_path / "sound.db"
    store = SQLiteStore(sound)
    for n in range(400):  # several pages of turns
        store.submit(
            NewTurnRequest(source="chat", thread_id=f"chat:{n}", input="x" * 200),
            SubmitRules("chat", 10),
            now=time.time(),
        )
    store.close()
    # A copy: this process found the original sound when it wrote it, and checks a file
    # once (see damage.verify_once); the copy is a file it has not seen.
    db = tmp_path / "toolang.db"
    db.write_bytes(sound.read_bytes())
    conn = sqlite3.connect(db)
    (page,) = conn.execute("PRAGMA page_size").fetchone()
    (root,) = conn.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'turn_requests'"
    ).fetchone()
    (leaf,) = conn.execute(  # a middle leaf: neither the first nor the last row's page
        "SELECT pageno FROM dbstat WHERE name = 'turn_requests' AND pagetype = 'leaf' "
        "ORDER BY pageno LIMIT 1 OFFSET 3"
    ).fetchone()
    conn.close()
    assert leaf != root
    with db.open("r+b") as f:
        f.seek((leaf - 1) * page + 8)
        f.write(b"\xff\xff" * 4)
    before = digest(db)

    opened = SQLiteStore(db)  # the edges are intact: opening finds nothing
    try:
        with pytest.raises(StoreCorrupt, match=r"is not a readable toolang store \(.*page"):
            opened.acquire("run-1")
        assert not opened.runtime_running()  # the lock was given back
        with pytest.raises(StoreCorrupt, match="restore it from a backup"):
            opened.submit(
                NewTurnRequest(source="chat", thread_id="chat:new", input="hello"),
                SubmitRules("chat", 10),
                now=time.time(),
            )
    finally:
        opened.close()
    assert digest(db) == before
