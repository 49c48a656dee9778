"""The SQLite store passes the conformance suite and guards its file."""

from __future__ import annotations

import pytest

from toolang_core.store.sqlite import SQLiteStore
from toolang_core.testing.store_conformance import StoreConformance


class TestSQLiteStoreConformance(StoreConformance):
    @pytest.fixture
    def toolang_store_factory(self, tmp_path):
        return lambda: SQLiteStore(tmp_path / "toolang.db")


import asyncio  # noqa: E402
import hashlib  # noqa: E402
import sqlite3  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402

import attrs  # noqa: E402
from sqlite_utils import Migrations  # noqa: E402

from toolang_core import open_plugin_database  # noqa: E402
from toolang_core.store.errors import (  # noqa: E402
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreMissing,
    StoreNeedsMigration,
    StoreSchemaTooNew,
)
from toolang_core.store.types import (  # noqa: E402
    Finish,
    NewTurnRequest,
    StepRecord,
    SubmitRules,
    TurnStatus,
)


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_store(path):
    store = SQLiteStore(path)
    store.submit(
        NewTurnRequest(source="chat", thread_id="chat:1", input="keep me"),
        SubmitRules("chat", 40),
        now=1.0,
    )
    store.close()
    # Fold the WAL back so the file alone holds everything (digests compare files).
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def test_a_newer_schema_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "toolang.db"
    make_store(path)
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
        "VALUES ('toolang-core', 'm999_from_the_future', 'x')"
    )
    conn.commit()
    conn.close()
    before = digest(path)
    for read_only in (False, True):
        with pytest.raises(StoreSchemaTooNew, match="m999_from_the_future"):
            SQLiteStore(path, read_only=read_only)
    assert digest(path) == before


def test_a_corrupt_file_is_reported_and_never_overwritten(tmp_path):
    path = tmp_path / "toolang.db"
    path.write_bytes(b"this is not a database" * 100)
    before = digest(path)
    for read_only in (False, True):
        with pytest.raises(StoreCorrupt, match="not a readable toolang store"):
            SQLiteStore(path, read_only=read_only)
    assert digest(path) == before


def test_a_store_another_process_keeps_locked_is_busy_not_damaged(tmp_path):
    """Only a file SQLite cannot read is damaged (restore it from a backup); one that
    another process keeps locked is busy: try again. Nothing is written either way."""
    path = tmp_path / "toolang.db"
    make_store(path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
            "c.execute('PRAGMA locking_mode = EXCLUSIVE')\n"
            "c.execute('BEGIN EXCLUSIVE')\n"
            "print('holding', flush=True)\n"
            "sys.stdin.readline()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        before = digest(path)
        for read_only in (False, True):
            with pytest.raises(StoreBusy, match="is locked by another connection") as raised:
                SQLiteStore(path, read_only=read_only, busy_timeout=0.1)
            assert "backup" not in str(raised.value)
        assert digest(path) == before
    finally:
        holder.communicate("\n", timeout=30)
    SQLiteStore(path).close()  # it let go: the store opens


@pytest.mark.parametrize("chosen", [None, "req-1"])
def test_a_submit_that_cannot_write_fails_as_a_store_error(tmp_path, chosen):
    """A plain enqueue is one INSERT, not a transaction of reads first: when another
    writer keeps the file past the busy timeout, or the store is open read-only, it
    fails as every write does (``StoreError``, which the CLI reports), storing nothing."""
    path = tmp_path / "toolang.db"
    make_store(path)
    new = NewTurnRequest(source="chat", thread_id="chat:busy", input="hi", id=chosen)
    plain = SubmitRules(thread_group="chat", priority=40)
    reader = SQLiteStore(path, read_only=True)
    try:
        with pytest.raises(StoreError, match="open read-only"):
            reader.submit(new, plain, now=1.0)
    finally:
        reader.close()
    store = SQLiteStore(path, busy_timeout=0.1)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreError, match=r"cannot write .*locked"):
            store.submit(new, plain, now=1.0)
        other.execute("ROLLBACK")
        assert [t for t in store.list_turns() if t.thread_id == "chat:busy"] == []
        assert store.submit(new, plain, now=1.0).status == "queued"  # the file let go
    finally:
        other.close()
        store.close()


def test_a_store_path_sqlite_cannot_open_says_so_not_damaged(tmp_path):
    path = tmp_path / "toolang.db"
    path.mkdir()  # a directory where the file should be
    with pytest.raises(StoreError, match=r"cannot open .* check that this user") as raised:
        SQLiteStore(path)
    assert not isinstance(raised.value, StoreCorrupt)


def test_a_file_of_a_format_sqlite_does_not_know_is_damaged_not_a_permissions_problem(tmp_path):
    path = tmp_path / "toolang.db"
    make_store(path)
    data = bytearray(path.read_bytes())
    data[44:48] = (5).to_bytes(4, "big")  # the schema format number: 1 to 4 exist
    path.write_bytes(bytes(data))
    before = digest(path)
    for read_only in (False, True):
        with pytest.raises(StoreCorrupt, match="not a readable toolang store"):
            SQLiteStore(path, read_only=read_only)
    assert digest(path) == before


def test_a_damaged_database_is_reported(tmp_path):
    path = tmp_path / "toolang.db"
    make_store(path)
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # smash the first page after the header
    path.write_bytes(bytes(data))
    with pytest.raises(StoreCorrupt):
        SQLiteStore(path)


def test_another_applications_database_is_refused(tmp_path):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER)")
    conn.commit()
    conn.close()
    before = digest(path)
    with pytest.raises(StoreCorrupt, match=r"not a toolang store .*invoices"):
        SQLiteStore(path)
    assert digest(path) == before


def plugin_tables() -> Migrations:
    migrations = Migrations("some-plugin")

    @migrations()
    def m001_notes(db):
        db["notes"].create({"id": int, "text": str}, pk="id")

    return migrations


def test_a_file_where_a_plugin_made_its_tables_first_becomes_a_store(tmp_path):
    path = tmp_path / "toolang.db"
    plugin_db = open_plugin_database(path, plugin_tables())
    plugin_db["notes"].insert({"id": 1, "text": "kept"})
    plugin_db.conn.close()
    make_store(path)
    store = SQLiteStore(path, read_only=True)
    try:
        assert [t.input for t in store.list_turns()] == ["keep me"]
    finally:
        store.close()
    plugin_db = open_plugin_database(path, plugin_tables())
    assert [r["text"] for r in plugin_db["notes"].rows] == ["kept"]
    plugin_db.conn.close()


def test_a_plugins_tables_in_the_store_file_do_not_stop_the_store(tmp_path):
    path = tmp_path / "toolang.db"
    make_store(path)
    open_plugin_database(path, plugin_tables()).conn.close()
    store = SQLiteStore(path)
    try:
        assert [t.input for t in store.list_turns()] == ["keep me"]
    finally:
        store.close()


def test_read_only_never_creates_or_migrates(tmp_path):
    path = tmp_path / "toolang.db"
    with pytest.raises(StoreMissing, match="toolang run"):
        SQLiteStore(path, read_only=True)
    assert not path.exists()
    conn = sqlite3.connect(path)  # an empty, un-migrated database
    conn.execute("PRAGMA user_version = 0")
    conn.commit()
    conn.close()
    before = digest(path)
    # not "an older schema": nothing of toolang's is in it yet
    with pytest.raises(StoreNeedsMigration, match=r"no 'toolang-core' schema yet.*never create"):
        SQLiteStore(path, read_only=True)
    assert digest(path) == before


def test_read_only_store_reads_what_another_process_wrote(tmp_path):
    path = tmp_path / "toolang.db"
    make_store(path)
    store = SQLiteStore(path, read_only=True)
    try:
        (turn,) = store.list_turns()
        assert turn.input == "keep me"
    finally:
        store.close()


def open_at_once(opener, paths, width):
    """Open each of ``paths`` from ``width`` threads released together; the failures."""
    failures: list[BaseException] = []
    for path in paths:
        barrier = threading.Barrier(width)

        def one(path=path, barrier=barrier):
            barrier.wait()
            try:
                opener(path).close()
            except BaseException as exc:
                failures.append(exc)

        workers = [threading.Thread(target=one) for _ in range(width)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    return failures


def test_many_connections_may_create_a_new_store_at_once(tmp_path):
    """Two `toolang chat --no-wait` on a fresh home at the same moment both work: the
    switch to WAL mode finds the file locked by the other and tries again (it was
    reported as a corrupt store)."""
    paths = [tmp_path / f"s{i}" / "toolang.db" for i in range(60)]
    assert open_at_once(SQLiteStore, paths, 8) == []
    for path in paths[:3]:
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_many_connections_may_create_a_plugin_database_at_once(tmp_path):
    migrations = Migrations("race-plugin")

    @migrations()
    def m001(db):
        db["notes"].create({"id": int, "text": str}, pk="id")

    class Opened:
        def __init__(self, path):
            self.db = open_plugin_database(path, migrations)

        def close(self):
            self.db.close()

    paths = [tmp_path / f"p{i}" / "plugin.db" for i in range(60)]
    assert open_at_once(Opened, paths, 8) == []


def test_only_one_runtime_may_own_the_file(tmp_path):
    path = tmp_path / "toolang.db"
    first, second = SQLiteStore(path), SQLiteStore(path)
    try:
        first.acquire("run-1")
        assert second.runtime_running()
        with pytest.raises(StoreBusy, match="run-1"):
            second.acquire("run-2")
    finally:
        first.close()
    assert not second.runtime_running()
    second.acquire("run-2")
    second.close()


def test_the_lock_dies_with_its_process(tmp_path):
    path = tmp_path / "toolang.db"
    code = (
        "import sys, os, signal\n"
        "from pathlib import Path\n"
        "from toolang_core.store.sqlite import SQLiteStore\n"
        f"s = SQLiteStore(Path({str(path)!r})); s.acquire('doomed')\n"
        "print('locked', flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert "locked" in out.stdout
    store = SQLiteStore(path)
    store.acquire("next")
    store.close()


def test_submissions_from_another_process_wake_the_listener(tmp_path):
    path = tmp_path / "toolang.db"
    store = SQLiteStore(path)
    waker = store.listen()

    async def scenario():
        assert not await waker.wait(0.05)
        code = (
            "from pathlib import Path\n"
            "from toolang_core.store.sqlite import SQLiteStore\n"
            "from toolang_core.store.types import NewTurnRequest, SubmitRules\n"
            f"s = SQLiteStore(Path({str(path)!r}))\n"
            "s.submit(NewTurnRequest(source='chat', thread_id='chat:9'), SubmitRules('chat', 1),"
            " now=1.0)\n"
        )
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", code)
        woke = await waker.wait(30)
        await proc.wait()
        return woke

    try:
        assert asyncio.run(scenario())
    finally:
        waker.close()
        store.close()


def test_a_runtime_waits_for_a_one_shot_holder_to_let_go(tmp_path):
    import threading

    path = tmp_path / "toolang.db"
    holder, waiter = SQLiteStore(path), SQLiteStore(path)
    holder.acquire("one-shot")
    threading.Timer(0.3, holder.close).start()
    waiter.acquire("main", wait_seconds=10)  # succeeds once the one-shot is done
    waiter.close()


HOT_PATHS = {
    # name: (sql, params) — statements run per turn or per scheduler loop
    "cancel_requests": ("CANCEL_REQUESTS_SQL", ("run",)),
    "next_wakeup": ("NEXT_WAKEUP_SQL", (1.0,)),
    "coalesce": ("COALESCE_SQL", ("t", "k")),
    "steer": ("STEER_SQL", ("t",)),
    "steer_waiting": ("STEER_WAITING_SQL", ("id",)),
    "finish": ("FINISH_SQL", ("completed", None, None, None, 1.0, 1.0, "id", "run", 1)),
    "record_step": (
        "RECORD_STEP_SQL",
        ("id", 1, "k", "completed", 1.0, 1.0, "{}", None, None, "run"),
    ),
}


@pytest.mark.parametrize("name", sorted(HOT_PATHS))
def test_hot_path_statements_never_scan_the_turn_table(tmp_path, name):
    """A partial index is only used when a query repeats its condition; a scan here would
    grow with every turn ever run. This pins the plans."""
    from toolang_core.store.sqlite import finishing, turns

    store = SQLiteStore(tmp_path / "toolang.db")
    try:
        sql_name, params = HOT_PATHS[name]
        sql = getattr(turns, sql_name, None) or getattr(finishing, sql_name)
        plan = " ".join(row[3] for row in store._conn.execute("EXPLAIN QUERY PLAN " + sql, params))
    finally:
        store.close()
    assert "SCAN turn_requests" not in plan, plan
    assert "SCAN threads" not in plan, plan


def _claim_two(store):
    rules = SubmitRules(thread_group="chat", priority=0)
    for n in range(2):
        store.submit(NewTurnRequest(source="chat", thread_id=f"chat:{n}"), rules, now=1.0)
    return store.claim(run_id="r", limit=2, now=2.0, lease_seconds=30.0, caps={})


def _finish(turn, *, attempt=None, kind="echo"):
    step = StepRecord(turn.id, 0, turn.attempt, kind, "completed", 3.0, 3.0)
    attempt = turn.attempt if attempt is None else attempt
    return Finish(turn.id, "r", attempt, TurnStatus.COMPLETED, 3.0, "ok", steps=(step,))


def test_finish_many_records_only_the_fenced_turns_and_their_steps(tmp_path):
    store = SQLiteStore(tmp_path / "s.db")
    a, b = _claim_two(store)
    assert store.finish_many([_finish(a), _finish(b, attempt=b.attempt + 1)]) == [True, False]
    assert store.get(a.id).status == "completed" and store.get(b.id).status == "running"
    assert [s.kind for s in store.steps(a.id)] == ["echo"] and store.steps(b.id) == []


def test_finish_many_naming_a_turn_twice_records_the_first_only(tmp_path):
    store = SQLiteStore(tmp_path / "s.db")
    a, _b = _claim_two(store)
    assert store.finish_many([_finish(a), _finish(a, kind="again")]) == [True, False]
    assert [s.kind for s in store.steps(a.id)] == ["echo"]


def test_finish_many_numbers_several_final_steps_of_one_turn_in_order(tmp_path):
    store = SQLiteStore(tmp_path / "s.db")
    a, b = _claim_two(store)
    store.record_step(StepRecord(a.id, 0, a.attempt, "model", "completed", 2.5, 2.5), run_id="r")
    two = attrs.evolve(_finish(b), steps=(*_finish(b).steps, *_finish(b, kind="more").steps))
    assert store.finish_many([_finish(a), two]) == [True, True]
    assert [(s.seq, s.kind) for s in store.steps(a.id)] == [(1, "model"), (2, "echo")]
    assert [(s.seq, s.kind) for s in store.steps(b.id)] == [(1, "echo"), (2, "more")]


def test_finish_many_numbers_one_final_step_per_turn_after_its_recorded_steps(tmp_path):
    store = SQLiteStore(tmp_path / "s.db")
    a, b = _claim_two(store)
    store.record_step(StepRecord(a.id, 0, a.attempt, "model", "completed", 2.5, 2.5), run_id="r")
    assert store.finish_many([_finish(a), _finish(b)]) == [True, True]
    assert [(s.seq, s.kind) for s in store.steps(a.id)] == [(1, "model"), (2, "echo")]
    assert [(s.seq, s.kind) for s in store.steps(b.id)] == [(1, "echo")]


def test_finish_many_stores_reasons_and_step_keys_in_mixed_and_plain_batches(tmp_path):
    """A batch where no turn has an outcome or error (and no step an error or key) binds
    none of them; one where some have them stores each one's own, NULL for the rest."""
    store = SQLiteStore(tmp_path / "s.db")
    rules = SubmitRules(thread_group="chat", priority=0)
    for n in range(4):
        store.submit(NewTurnRequest(source="chat", thread_id=f"chat:{n}"), rules, now=1.0)
    a, b, c, d = store.claim(run_id="r", limit=4, now=2.0, lease_seconds=30.0, caps={})
    failed_step = StepRecord(b.id, 0, b.attempt, "tool", "failed", 3.0, 3.0, error="boom")
    keyed_step = StepRecord(b.id, 0, b.attempt, "tool", "completed", 3.0, 3.0, idempotency_key="k1")
    mixed = [
        _finish(a),
        Finish(
            b.id, "r", b.attempt, TurnStatus.FAILED, 3.0, None, "error", "it broke", (failed_step,)
        ),
    ]
    assert store.finish_many(mixed) == [True, True]
    assert store.finish_many(
        [
            _finish(c),
            attrs.evolve(
                _finish(d), steps=(attrs.evolve(keyed_step, turn_id=d.id, attempt=d.attempt),)
            ),
        ]
    ) == [True, True]
    stored = {t.id: t for t in (store.get(a.id), store.get(b.id), store.get(c.id), store.get(d.id))}
    assert (stored[a.id].status, stored[a.id].output, stored[a.id].outcome, stored[a.id].error) == (
        "completed",
        "ok",
        None,
        None,
    )
    assert (stored[b.id].status, stored[b.id].output, stored[b.id].outcome, stored[b.id].error) == (
        "failed",
        None,
        "error",
        "it broke",
    )
    assert (stored[c.id].outcome, stored[c.id].error) == (None, None)
    assert [(s.kind, s.error, s.idempotency_key) for s in store.steps(b.id)] == [
        ("tool", "boom", None)
    ]
    assert [(s.kind, s.error, s.idempotency_key) for s in store.steps(a.id)] == [
        ("echo", None, None)
    ]
    assert [(s.kind, s.idempotency_key) for s in store.steps(d.id)] == [("tool", "k1")]
    assert store.find_step("k1") is not None
    store.close()


def test_a_claim_reads_the_groups_once_unless_another_connection_committed(tmp_path):
    """The claim's write transaction reuses what its read before saw (groups with heads,
    running turns by group) while no other connection has committed; a request another
    process queued in between is still seen and started."""
    from toolang_core.store.base import ClaimRequest
    from toolang_core.store.sqlite import admission

    store = SQLiteStore(tmp_path / "toolang.db")
    other = SQLiteStore(tmp_path / "toolang.db")
    try:
        rules = SubmitRules(thread_group="chat", priority=0)
        store.submit(NewTurnRequest(source="chat", thread_id="chat:0"), rules, now=1.0)
        statements: list[str] = []
        store._conn.set_trace_callback(statements.append)
        request = ClaimRequest("r", 4, 2.0, 30.0, {"chat": 2, "task": 2})
        (first,) = store.claim_turns(request)
        assert first.thread_id == "chat:0"
        assert sum("WITH RECURSIVE" in s for s in statements) == 1, statements
        assert sum(s.startswith("SELECT thread_group, count(*)") for s in statements) == 1

        store.submit(NewTurnRequest(source="chat", thread_id="chat:1"), rules, now=3.0)
        room = admission.may_claim(store._conn, request)
        assert room is not None and room.groups == ["chat"]
        task_rules = SubmitRules(thread_group="task", priority=0)
        other.submit(NewTurnRequest(source="task", thread_id="task:0"), task_rules, now=3.0)
        started = store._tx(lambda c: admission.claim(c, request, room))
        assert sorted(t.thread_id for t in started) == ["chat:1", "task:0"]
    finally:
        store._conn.set_trace_callback(None)
        other.close()
        store.close()


def test_a_claim_into_full_groups_starts_no_write_transaction(tmp_path):
    """A busy runtime's passes mostly find its groups full (woken by a submission or a
    turn's record): they read, and take the write lock only when a group has room."""
    store = SQLiteStore(tmp_path / "toolang.db")
    try:
        rules = SubmitRules(thread_group="chat", priority=0)
        for n in range(2):
            store.submit(NewTurnRequest(source="chat", thread_id=f"chat:{n}"), rules, now=1.0)
        (first,) = store.claim(run_id="r", limit=2, now=2.0, lease_seconds=30.0, caps={"chat": 1})
        statements: list[str] = []
        store._conn.set_trace_callback(statements.append)
        assert store.claim(run_id="r", limit=2, now=3.0, lease_seconds=30.0, caps={"chat": 1}) == []
        assert not [s for s in statements if s.startswith("BEGIN")], statements
        store._conn.set_trace_callback(None)
        finish = Finish(first.id, "r", first.attempt, TurnStatus.COMPLETED, 4.0, "ok")
        assert store.finish_many([finish]) == [True]
        (second,) = store.claim(run_id="r", limit=2, now=5.0, lease_seconds=30.0, caps={"chat": 1})
        assert second.thread_id != first.thread_id
    finally:
        store.close()
