"""What the PostgreSQL store adds to the contract: settings, secrets, the schema guard,
read-only opens, presence, wake-ups, and the rules the database itself enforces."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

import toolang_store_postgres
from toolang_core import MASK, ConfigError
from toolang_core.store import (
    Finish,
    NewTurnRequest,
    RecordConflict,
    StepRecord,
    StoreCorrupt,
    StoreError,
    StoreMissing,
    StoreNeedsMigration,
    StoreSchemaTooNew,
    StoreUnavailable,
    SubmitRules,
    TurnStatus,
)
from toolang_store_postgres import schema
from toolang_store_postgres.cluster import free_port
from toolang_store_postgres.schema import MIGRATIONS
from toolang_store_postgres.settings import describe_dsn
from toolang_store_postgres.store import PostgresStore

PASSWORD = "hunter2-very-secret"
OURS = f"toolang:%:{os.getpid()}"
"""The sessions this test process opened (other test runs may share the server)."""


def with_password(dsn: str) -> str:
    """The same server with a password in the DSN (the test server trusts everyone)."""
    return make_conninfo(dsn, password=PASSWORD)


def submit(store: PostgresStore, thread: str = "chat:1") -> str:
    request = NewTurnRequest(source="chat", thread_id=thread, input="hi")
    return store.submit(request, SubmitRules("chat", 40), now=time.time()).id


# -- settings and secrets -----------------------------------------------------------------


def test_the_location_shows_where_the_store_is_but_never_the_password(
    toolang_pg_store, toolang_pg_dsn
):
    store = toolang_pg_store()
    assert store.location == describe_dsn(toolang_pg_dsn, store.names.schema)
    masked = PostgresStore(with_password(toolang_pg_dsn), schema_name=store.names.schema)
    try:
        assert PASSWORD not in masked.location
        assert f":{MASK}@" in masked.location
        assert masked.location.endswith(f"/postgres#{store.names.schema}")
    finally:
        masked.close()


def test_both_dsn_forms_are_described_without_the_password():
    url = describe_dsn(f"postgresql://app:{PASSWORD}@db.example:6543/toolang", "prod")
    pairs = describe_dsn(f"host=db.example user=app password={PASSWORD} dbname=toolang", "prod")
    assert url == f"postgresql://app:{MASK}@db.example:6543/toolang#prod"
    assert pairs == f"postgresql://app:{MASK}@db.example/toolang#prod"


def test_an_unreachable_server_is_reported_without_the_password():
    dsn = f"postgresql://app:{PASSWORD}@127.0.0.1:{free_port()}/toolang"
    with pytest.raises(StoreUnavailable) as info:
        PostgresStore(dsn, connect_timeout=1)
    message = str(info.value)
    assert PASSWORD not in message
    assert f"postgresql://app:{MASK}@127.0.0.1" in message
    assert "[plugins.store-postgres] dsn" in message


def test_the_backend_without_a_dsn_names_the_setting(toolang_runtime):
    runtime = toolang_runtime(
        '[store]\nbackend = "postgres"\n',
        plugins={"store-postgres": toolang_store_postgres},
    )
    with pytest.raises(ConfigError) as info:
        runtime.open_store()
    (problem,) = info.value.problems
    assert "plugins.store-postgres.dsn: missing" in problem


def test_the_dsn_comes_from_the_environment(toolang_runtime, toolang_pg_dsn, toolang_pg_schema):
    runtime = toolang_runtime(
        '[store]\nbackend = "postgres"\n[plugins.store-postgres]\n'
        f'dsn = "${{APP_PG}}"\nschema = "{toolang_pg_schema}"\n',
        plugins={"store-postgres": toolang_store_postgres},
        env={"APP_PG": with_password(toolang_pg_dsn)},
    )
    assert "APP_PG" not in repr(runtime.settings["store-postgres"])
    assert PASSWORD not in repr(runtime.settings["store-postgres"])
    store = runtime.open_store()
    try:
        assert store.name == "postgres"
        assert PASSWORD not in store.location
    finally:
        store.close()


def test_unusable_settings_are_each_named(toolang_runtime):
    runtime = toolang_runtime(
        '[store]\nbackend = "postgres"\n[plugins.store-postgres]\n'
        'dsn = "host=db"\nschema = "Drop Table"\npool_size = 0\n',
        plugins={"store-postgres": toolang_store_postgres},
    )
    with pytest.raises(ConfigError) as info:
        runtime.open_store()
    keys = [problem.split(": ")[1] for problem in info.value.problems]
    assert keys == ["plugins.store-postgres.schema", "plugins.store-postgres.pool_size"]


# -- the schema and its guard ---------------------------------------------------------------


def test_a_schema_written_by_a_newer_version_is_refused_untouched(
    toolang_pg_store, toolang_pg_dsn, toolang_pg_schema
):
    toolang_pg_store().close()
    with psycopg.connect(toolang_pg_dsn, autocommit=True) as conn:
        conn.execute(
            f'INSERT INTO "{toolang_pg_schema}".toolang_migrations (migration_set, name) '
            "VALUES ('toolang-store-postgres', 'm999_from_the_future')"
        )
    with pytest.raises(StoreSchemaTooNew, match="m999_from_the_future") as info:
        toolang_pg_store()
    assert "upgrade toolang-store-postgres" in str(info.value)


def test_a_schema_of_something_else_is_refused_untouched(
    toolang_pg_store, toolang_pg_dsn, toolang_pg_schema
):
    with psycopg.connect(toolang_pg_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{toolang_pg_schema}"')
        conn.execute(f'CREATE TABLE "{toolang_pg_schema}".invoices (id int)')
    with pytest.raises(StoreCorrupt, match="invoices"):
        toolang_pg_store()
    with psycopg.connect(toolang_pg_dsn) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (toolang_pg_schema,),
        ).fetchall()
    assert tables == [("invoices",)]


def test_read_only_opens_never_create_the_schema(
    toolang_pg_store, toolang_pg_dsn, toolang_pg_schema
):
    with pytest.raises(StoreMissing, match="toolang run"):
        toolang_pg_store(read_only=True)
    with psycopg.connect(toolang_pg_dsn) as conn:
        found = conn.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = %s", (toolang_pg_schema,)
        ).fetchone()
    assert found is None


def test_read_only_opens_never_migrate(toolang_pg_store, toolang_pg_dsn, toolang_pg_schema):
    toolang_pg_store().close()
    with psycopg.connect(toolang_pg_dsn, autocommit=True) as conn:
        conn.execute(f'DELETE FROM "{toolang_pg_schema}".toolang_migrations')
    with pytest.raises(StoreNeedsMigration, match="m001_runtime"):
        toolang_pg_store(read_only=True)


def test_a_failing_migration_is_named_and_rolled_back(
    toolang_pg_store, toolang_pg_dsn, toolang_pg_schema, monkeypatch
):
    broken = "CREATE TABLE {s}.tags (name text); INSERT INTO {s}.no_such_table VALUES (1);"
    monkeypatch.setattr(schema, "MIGRATIONS", (*MIGRATIONS, ("m999_broken", broken)))
    with pytest.raises(StoreCorrupt, match=r"(?s)migration 'm999_broken'.*rolled back"):
        toolang_pg_store()
    with psycopg.connect(toolang_pg_dsn) as conn:
        found = conn.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = %s", (toolang_pg_schema,)
        ).fetchone()
    assert found is None  # the schema and the migrations before the broken one, too


def test_read_only_opens_read_but_refuse_writes(toolang_pg_store):
    writer = toolang_pg_store()
    turn_id = submit(writer)
    reader = toolang_pg_store(read_only=True)
    assert reader.get(turn_id).input == "hi"
    with pytest.raises(StoreError, match="read-only"):
        submit(reader)


def test_nodes_starting_together_migrate_once(toolang_pg_dsn, toolang_pg_schema):
    errors: list[BaseException] = []

    def open_and_close() -> None:
        try:
            PostgresStore(toolang_pg_dsn, schema_name=toolang_pg_schema, pool_size=1).close()
        except BaseException as exc:
            errors.append(exc)

    starters = [threading.Thread(target=open_and_close) for _ in range(4)]
    for t in starters:
        t.start()
    for t in starters:
        t.join()
    assert errors == []
    with psycopg.connect(toolang_pg_dsn) as conn:
        applied = conn.execute(
            f'SELECT name FROM "{toolang_pg_schema}".toolang_migrations ORDER BY name'
        ).fetchall()
    assert applied == [(name,) for name, _ in MIGRATIONS]


# -- rules in the database ---------------------------------------------------------------------


def test_a_second_active_turn_on_a_thread_is_refused_by_the_database(
    toolang_pg_store, toolang_pg_dsn, toolang_pg_schema
):
    store = toolang_pg_store()
    submit(store)
    second = submit(store)
    store.claim(run_id="r", limit=5, now=time.time(), lease_seconds=30, caps={})
    with psycopg.connect(toolang_pg_dsn) as conn, pytest.raises(psycopg.errors.UniqueViolation):
        conn.execute(
            f"UPDATE \"{toolang_pg_schema}\".turn_requests SET status = 'running' WHERE id = %s",
            (second,),
        )


def test_group_caps_hold_for_claimers_racing_on_separate_connections(toolang_pg_store):
    store = toolang_pg_store()
    for i in range(60):
        submit(store, f"chat:{i}")
    cap, peak, active = 2, [0], [0]
    lock = threading.Lock()
    errors: list[BaseException] = []

    def claimer(n: int) -> None:
        own = toolang_pg_store(pool_size=1)
        try:
            while True:
                turns = own.claim(
                    run_id=f"r{n}", limit=3, now=time.time(), lease_seconds=30, caps={"chat": cap}
                )
                if not turns:
                    if own.group_load().get("chat", (0, 0))[1] == 0:
                        return
                    continue
                with lock:
                    active[0] += len(turns)
                    peak[0] = max(peak[0], active[0])
                time.sleep(0.002)
                with lock:  # counted as ended before the finish commits: never undercounts
                    active[0] -= len(turns)
                for t in turns:
                    own.finish(
                        t.id, run_id=f"r{n}", attempt=t.attempt, status=TurnStatus.COMPLETED,
                        now=time.time(),
                    )  # fmt: skip
        except BaseException as exc:
            errors.append(exc)

    claimers = [threading.Thread(target=claimer, args=(n,)) for n in range(4)]
    for t in claimers:
        t.start()
    for t in claimers:
        t.join()
    assert errors == []
    assert 1 <= peak[0] <= cap
    assert store.group_load().get("chat", (0, 0)) == (0, 0)


def test_concurrent_record_updates_never_lose_one(toolang_pg_store):
    toolang_pg_store().put_record("counter", "n", {"n": 0}, now=0)
    errors: list[BaseException] = []

    def bump(times: int) -> None:
        own = toolang_pg_store(pool_size=1)
        try:
            done = 0
            while done < times:
                record = own.get_record("counter", "n")
                try:
                    own.put_record(
                        "counter", "n", {"n": record.data["n"] + 1}, now=0,
                        expect_revision=record.revision,
                    )  # fmt: skip
                except RecordConflict:
                    continue
                done += 1
        except BaseException as exc:
            errors.append(exc)

    writers = [threading.Thread(target=bump, args=(25,)) for _ in range(4)]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    assert errors == []
    assert toolang_pg_store().get_record("counter", "n").data == {"n": 100}


# -- presence and wake-ups ---------------------------------------------------------------------


def test_a_runtime_is_seen_from_any_connection_while_it_holds_the_store(toolang_pg_store):
    serving, watching = toolang_pg_store(), toolang_pg_store()
    assert not watching.runtime_running()
    serving.acquire("run-1")
    assert watching.runtime_running()
    serving.close()
    assert not watching.runtime_running()


def test_a_submission_on_another_connection_wakes_a_listener(toolang_pg_store):
    listening, submitting = toolang_pg_store(), toolang_pg_store()

    async def scenario() -> tuple[bool, bool]:
        waker = listening.listen()
        try:
            await waker.wait(0.01)  # connects and listens (a reconnect reports a wake-up)
            quiet = await waker.wait(0.05)
            loop = asyncio.get_running_loop()
            loop.call_later(0.05, submit, submitting)
            woken = await waker.wait(10)
            return quiet, woken
        finally:
            waker.close()

    assert asyncio.run(scenario()) == (False, True)


def test_a_cut_listener_reconnects_and_reports_a_wakeup(toolang_pg_store, toolang_pg_dsn):
    listening, submitting = toolang_pg_store(), toolang_pg_store()

    async def scenario() -> tuple[bool, bool]:
        waker = listening.listen()
        try:
            await waker.wait(0.01)
            with psycopg.connect(toolang_pg_dsn, autocommit=True) as admin:
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE query LIKE 'LISTEN%%' AND application_name LIKE %s",
                    (OURS,),
                )
            cut = await waker.wait(10)  # the broken connection wakes the runtime to look
            await waker.wait(0.5)  # reconnects
            loop = asyncio.get_running_loop()
            loop.call_later(0.05, submit, submitting)
            woken = await waker.wait(10)
            return cut, woken
        finally:
            waker.close()

    assert asyncio.run(scenario()) == (True, True)


def test_connections_ended_by_the_server_cost_one_call_at_most(toolang_pg_store, toolang_pg_dsn):
    store = toolang_pg_store(pool_size=1)
    turn_id = submit(store)
    with psycopg.connect(toolang_pg_dsn, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE %s",
            (OURS,),
        )
    with contextlib.suppress(StoreUnavailable):  # a pooled connection that died fails once
        store.get(turn_id)
    assert store.get(turn_id).id == turn_id


def test_the_one_statement_paths_keep_the_fence_and_the_rules(toolang_pg_store):
    """The round-trip savings (a steer read before the locked transaction, steps and
    records in one statement) change no answer: a steer is taken only by the turn's
    holder, a batch repeating a record key counts each write, a batch of steps of two
    turns or attempts is stored step by step, all or nothing."""
    store = toolang_pg_store()
    now = time.time()
    first, other = submit(store), submit(store, thread="chat:2")
    claimed = store.claim(run_id="r", limit=5, now=now, lease_seconds=30, caps={})
    assert {t.id for t in claimed} == {first, other}
    steer = store.submit(
        NewTurnRequest(source="chat", thread_id="chat:1", input="also"),
        SubmitRules("chat", 40, strategy="steer"),
        now=now,
    )
    assert steer.steer
    assert store.take_steer(first, run_id="zombie", attempt=1, now=now) == []
    assert store.take_steer(first, run_id="r", attempt=2, now=now) == []
    taken = store.take_steer(first, run_id="r", attempt=1, now=now)
    assert [t.id for t in taken] == [steer.id]
    assert store.take_steer(first, run_id="r", attempt=1, now=now) == []

    def step(turn: str, kind: str, attempt: int = 1) -> StepRecord:
        return StepRecord(turn, 0, attempt, kind, "completed", now, now, {"k": kind})

    mixed = store.record_steps([step(first, "a"), step(other, "b")], run_id="r")
    assert mixed is not None and [s.seq for s in mixed] == [1, 1]
    assert store.record_steps([step(first, "c"), step(first, "d", attempt=2)], run_id="r") is None
    assert [s.kind for s in store.steps(first)] == ["a"]

    twice = (("trace", first, {"n": 1}), ("trace", first, {"n": 2}), ("other", first, {}))
    done = store.finish_many(
        [Finish(first, "r", 1, TurnStatus.COMPLETED, now, output="ok", records=twice)]
    )
    assert done == [True]
    trace = store.get_record("trace", first)
    assert trace is not None and (trace.revision, trace.data) == (2, {"n": 2})
