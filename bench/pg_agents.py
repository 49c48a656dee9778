"""Agent turns on PostgreSQL across processes (``bench/postgres.py``'s fourth part).

The workload is ``bench/agent_turns.py``'s (every installed plugin through its entry
point, the starter ``toolang.toml`` with memory on, the scripted model at the model
boundary asking for one ``add`` tool call, then answering), run by 1, 2 and 4 runtime
processes on one PostgreSQL schema. Each process is a fork of this one serving its own
home (its memory-sqlite file), all with one approval key. The turns are committed in one
transaction once every process is up; the clock runs until all are completed (every
answer is checked).

Printed per process count: turns/s, the runtimes' CPU per turn (their processes', every
thread; not the database server's) and **database round trips per agent turn**: the
statements the server executed for the runtimes while the turns ran (its
``pg_stat_statements`` calls, utility statements — BEGIN, COMMIT — included), less the
bench's own progress reads, divided by the turns. Those are round trips: the
store pipelines none of them (only ``executemany`` would, which the store uses just for a
batch of records repeating a key). Where the figure goes is printed
too: the statements that took most calls per turn.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import queue
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import psycopg

from toolang_core.store import NewTurnRequest, SubmitRules
from toolang_core.store.backend import new_turn_values
from toolang_store_postgres import ingress
from toolang_store_postgres.cluster import ThrowawayCluster
from toolang_store_postgres.schema import Names

STATEMENTS_SQL = (
    "SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements "
    "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
)
TOP_SQL = (
    "SELECT calls, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) FROM pg_stat_statements "
    "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "ORDER BY calls DESC LIMIT 8"
)


class CountingCluster(ThrowawayCluster):
    """A throwaway server that counts statements (``pg_stat_statements``, top level)."""

    def _configure(self, data: Path) -> None:
        super()._configure(data)
        with (data / "postgresql.auto.conf").open("a", encoding="utf-8") as conf:
            conf.write("shared_preload_libraries = 'pg_stat_statements'\n")
            conf.write("pg_stat_statements.track_utility = on\n")


def counting(dsn: str) -> bool:
    """Whether the server counts statements (the extension is preloaded)."""
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            conn.execute(STATEMENTS_SQL).fetchone()
    except psycopg.Error:
        return False
    return True


def _config(dsn: str, schema: str, key_file: Path) -> str:
    from _common import starter_text
    from agent_turns import BENCH_SETTINGS

    def edit(text: str) -> str:  # on PostgreSQL; no HTTP server (the nodes share a host)
        text = text.replace('backend = "sqlite"', 'backend = "postgres"', 1)
        return text.replace("[plugins.server]\nenabled = true", "[plugins.server]\nenabled = false")

    return (
        starter_text(edit)
        + BENCH_SETTINGS
        + f'\n[plugins.store-postgres]\ndsn = "{dsn}"\nschema = "{schema}"\n'
        + f'\n[approvals]\nkey_file = "{key_file}"\n'
    )


def _worker(dsn: str, schema: str, key_file: Path, *, ready: Any, stop: Any, out: Any) -> None:
    """One runtime process: serve until ``stop``; report its CPU time and answers."""
    from _common import compose, started
    from agent_turns import ADDER, Workload

    from toolang_core.logs import configure_logging

    configure_logging(level="error")
    home = Path(tempfile.mkdtemp(prefix="toolang-bench-node-"))
    (home / "agents" / "adder").mkdir(parents=True)
    (home / "agents" / "adder" / "AGENT.md").write_text(ADDER)
    os.chdir(home)
    workload = Workload()
    runtime = compose(home, _config(dsn, schema, key_file), workload)

    async def serve() -> None:
        halt = asyncio.Event()
        serving = await started(runtime, halt)
        ready.put(os.getpid())
        cpu = time.process_time()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        cpu = time.process_time() - cpu
        halt.set()
        await serving
        out.put((cpu, workload.model_calls, workload.tool_calls))

    asyncio.run(serve())


def agent_turns(dsn: str, processes: int, turns: int, threads: int) -> dict[str, Any]:
    """The figures of one run of ``turns`` agent turns on ``processes`` runtimes."""
    schema = f"bench_agents_{uuid.uuid4().hex[:8]}"
    ctx = mp.get_context("fork")
    ready, out, stop = ctx.Queue(), ctx.Queue(), ctx.Event()
    names = Names(schema)
    workers: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        key_file = Path(tmp) / "approval.key"
        try:
            for _ in range(processes):  # one after another: the first makes the key
                worker = ctx.Process(
                    target=_worker,
                    args=(dsn, schema, key_file),
                    kwargs={"ready": ready, "stop": stop, "out": out},
                )
                worker.start()
                workers.append(worker)
                _await_ready(ready, worker)
            figures = _drive(dsn, names, turns, threads)
        finally:
            stop.set()
            alive = [w for w in workers if w.is_alive()]
            reports = [out.get(timeout=120) for _ in alive]
            for worker in workers:
                worker.join(60)
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
                for extra in conn.execute(
                    "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s", (f"{schema}__%",)
                ).fetchall():
                    conn.execute(f'DROP SCHEMA "{extra[0]}" CASCADE')
    cpu = sum(r[0] for r in reports)
    model_calls = sum(r[1] for r in reports)
    tool_calls = sum(r[2] for r in reports)
    assert model_calls == 2 * turns, (model_calls, turns)
    assert tool_calls == turns, (tool_calls, turns)
    figures["cpu_ms_per_turn"] = round(1000 * cpu / turns, 2)
    return figures


def _await_ready(ready: Any, worker: Any) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            ready.get(timeout=1)
        except queue.Empty:
            if not worker.is_alive():
                raise RuntimeError(f"a runtime process exited ({worker.exitcode})") from None
        else:
            return
    raise RuntimeError("a runtime process did not start within 300 s")


def _drive(dsn: str, names: Names, turns: int, threads: int) -> dict[str, Any]:
    now = time.time()
    params = [
        ingress.insert_params(
            new_turn_values(
                NewTurnRequest(
                    source="chat", thread_id=f"chat:{i % threads}", input=f"add {i} {2 * i + 1}"
                ),
                SubmitRules("chat", 40),
                f"a{i}",
                now,
            ),
            {},
        )
        for i in range(turns)
    ]
    counts = counting(dsn)
    done_sql = names("SELECT count(*) FROM {s}.turn_requests WHERE status = 'completed'")
    with psycopg.connect(dsn, autocommit=True) as conn:
        with conn.transaction(), conn.cursor() as cur:
            cur.executemany(names(ingress.INSERT_SQL), params)
            if counts:  # from here on: what the runtimes execute (and our reads)
                cur.execute("SELECT pg_stat_statements_reset()")
            began = time.perf_counter()
            cur.execute("SELECT pg_notify(%s, 'bench')", (names.channel,))
        own = 1  # our COMMIT
        deadline = time.monotonic() + 1800
        while True:
            own += 1
            done = conn.execute(done_sql).fetchone()[0]  # type: ignore[index]
            if done == turns:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{done} of {turns} agent turns completed after 30 min")
            time.sleep(0.05)
        elapsed = time.perf_counter() - began
        figures: dict[str, Any] = {"turns_per_s": round(turns / elapsed, 1)}
        if counts:
            statements = conn.execute(STATEMENTS_SQL).fetchone()[0]  # type: ignore[index]
            figures["round_trips_per_turn"] = round((statements - own) / turns, 2)
            figures["top"] = [
                (round(calls / turns, 2), query) for calls, query in conn.execute(TOP_SQL)
            ]
        wrong = conn.execute(
            names(
                "SELECT count(*) FROM {s}.turn_requests WHERE output IS DISTINCT FROM "
                "'the sum is ' || (split_part(input, ' ', 2)::int + split_part(input, ' ', 3)::int)"
            )
        ).fetchone()[0]  # type: ignore[index]
        assert wrong == 0, f"{wrong} wrong answers"
    return figures
