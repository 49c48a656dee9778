#!/usr/bin/env python3
"""The PostgreSQL store across processes: throughput, cross-node cancel, reclaim.

1. **Durable turns/s** with 1, 2 and 4 `toolang run` processes (echo executor, fsync on):
   N requests over T threads are committed in one transaction once every process is
   up; the clock runs until all are terminal. In the same run, the **raw claim loop**
   of the reference "threads" design (a per-thread mutex row, SKIP LOCKED claim,
   plpgsql complete; ../shared/reference/bench/pg_claim_bench.py, re-implemented here)
   drains the same workload with as many bare worker processes. Printed: both rates
   and their ratio.
2. **Cross-node cancel**: a turn runs on one of two processes; this process cancels it;
   latency is the turn's ``finished_at`` minus the moment the cancel was issued (one
   machine, one clock).
3. **Reclaim**: the process running a turn is SIGKILLed; time until another process
   started it again (its ``started_at`` minus the kill), with ``lease_seconds = 2``.
4. **Agent turns** (``bench/pg_agents.py``): ``bench/agent_turns.py``'s workload with
   memory on, on 1, 2 and 4 runtime processes: turns/s, the runtimes' CPU per turn and
   database round trips per agent turn (``pg_stat_statements``), with the statements
   taking most of them; and the cores this machine gives the bench.

    python3 bench/postgres.py [--turns 5000] [--threads 1000] [--cancels 40] [--reclaims 4]
                              [--agent-turns 1000] [--agent-threads 100] [--agents-only]

Uses ``$TOOLANG_PG_DSN`` when set (round trips are counted only if it has
``pg_stat_statements`` preloaded), else a throwaway cluster with fsync on that counts
them. Goals: toolang at least half the raw rate; cancel p99 < 100 ms; reclaim ≤ lease +
1 s; at most 12 round trips per agent turn with memory on; with 4 cores or more, 2
processes at least 1.6 x one in agent turns/s. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg

from toolang_core.store import NewTurnRequest, SubmitRules, TurnStatus
from toolang_core.store.backend import new_turn_values
from toolang_store_postgres import ingress
from toolang_store_postgres.cluster import ENV_DSN
from toolang_store_postgres.schema import Names
from toolang_store_postgres.store import PostgresStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pg_agents import CountingCluster, agent_turns

LEASE = 2.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# -- the raw claim loop (design C of the reference survey) ----------------------------------

RAW_SCHEMA = """
CREATE SCHEMA {s};
CREATE TABLE {s}.turn_requests (
    id bigserial PRIMARY KEY, thread_id text NOT NULL, priority smallint NOT NULL,
    state smallint NOT NULL DEFAULT 0, attempt int NOT NULL DEFAULT 0,
    lease_owner text, lease_expires timestamptz
);
CREATE UNIQUE INDEX ON {s}.turn_requests (thread_id) WHERE state = 1;
CREATE INDEX ON {s}.turn_requests (thread_id, priority, id) WHERE state = 0;
CREATE TABLE {s}.threads (
    thread_id text PRIMARY KEY, head_job_id bigint, head_priority smallint, running_job_id bigint
);
CREATE INDEX ON {s}.threads (head_priority, head_job_id)
    WHERE running_job_id IS NULL AND head_job_id IS NOT NULL;
CREATE FUNCTION {s}.enqueue(p_thread text, p_prio smallint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE v_id bigint;
BEGIN
    INSERT INTO {s}.turn_requests (thread_id, priority) VALUES (p_thread, p_prio)
    RETURNING id INTO v_id;
    INSERT INTO {s}.threads AS t (thread_id, head_job_id, head_priority)
    VALUES (p_thread, v_id, p_prio)
    ON CONFLICT (thread_id) DO UPDATE SET head_job_id = v_id, head_priority = p_prio
     WHERE t.running_job_id IS NULL
       AND (t.head_job_id IS NULL OR (p_prio, v_id) < (t.head_priority, t.head_job_id));
    RETURN v_id;
END $$;
CREATE FUNCTION {s}.complete(p_id bigint, p_owner text, p_attempt int) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE v_thread text; v_next bigint; v_prio smallint;
BEGIN
    SELECT thread_id INTO v_thread FROM {s}.turn_requests WHERE id = p_id;
    PERFORM 1 FROM {s}.threads WHERE thread_id = v_thread FOR UPDATE;
    UPDATE {s}.turn_requests SET state = 2
     WHERE id = p_id AND state = 1 AND lease_owner = p_owner AND attempt = p_attempt;
    IF NOT FOUND THEN RETURN false; END IF;
    SELECT id, priority INTO v_next, v_prio FROM {s}.turn_requests
     WHERE thread_id = v_thread AND state = 0 ORDER BY priority, id LIMIT 1;
    UPDATE {s}.threads SET running_job_id = NULL, head_job_id = v_next, head_priority = v_prio
     WHERE thread_id = v_thread;
    RETURN true;
END $$;
"""

RAW_CLAIM = """
WITH c AS (SELECT th.thread_id, th.head_job_id FROM {s}.threads th
             JOIN {s}.turn_requests j ON j.id = th.head_job_id AND j.state = 0
            WHERE th.running_job_id IS NULL AND th.head_job_id IS NOT NULL
            ORDER BY th.head_priority, th.head_job_id LIMIT 1
            FOR UPDATE OF th SKIP LOCKED),
     th AS (UPDATE {s}.threads SET running_job_id = c.head_job_id, head_job_id = NULL,
                   head_priority = NULL
              FROM c WHERE threads.thread_id = c.thread_id RETURNING c.head_job_id AS job_id)
UPDATE {s}.turn_requests t SET state = 1, attempt = t.attempt + 1, lease_owner = %s,
       lease_expires = clock_timestamp() + interval '30 seconds'
  FROM th WHERE t.id = th.job_id
RETURNING t.id, t.attempt
"""


def raw_worker(dsn: str, schema: str, owner: str, start: Any, done: Any) -> None:
    s = f'"{schema}"'
    claim, complete = RAW_CLAIM.format(s=s), f"SELECT {s}.complete(%s, %s, %s)"
    with psycopg.connect(dsn, autocommit=True) as conn:
        start.wait()
        while True:
            row = conn.execute(claim, (owner,)).fetchone()
            if row is None:
                left = conn.execute(
                    f"SELECT EXISTS (SELECT 1 FROM {s}.turn_requests WHERE state IN (0, 1))"
                ).fetchone()
                if not left or not left[0]:
                    break
                continue
            conn.execute(complete, (row[0], owner, row[1]))
    done.put(owner)


def raw_rate(dsn: str, workload: list[tuple[str, int]], processes: int) -> float:
    schema = f"bench_raw_{uuid.uuid4().hex[:8]}"
    s = f'"{schema}"'
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(RAW_SCHEMA.format(s=s))
        with conn.transaction(), conn.cursor() as cur:
            cur.executemany(f"SELECT {s}.enqueue(%s, %s::smallint)", workload)
        conn.execute(f"ANALYZE {s}.turn_requests")
        conn.execute(f"ANALYZE {s}.threads")
    ctx = mp.get_context("fork")
    start, done = ctx.Event(), ctx.Queue()
    workers = [
        ctx.Process(target=raw_worker, args=(dsn, schema, f"w{i}", start, done))
        for i in range(processes)
    ]
    for w in workers:
        w.start()
    time.sleep(0.5)  # let every worker connect before the clock starts
    began = time.perf_counter()
    start.set()
    for _ in workers:
        done.get()
    elapsed = time.perf_counter() - began
    for w in workers:
        w.join()
    with psycopg.connect(dsn, autocommit=True) as conn:
        ended = conn.execute(f"SELECT count(*) FROM {s}.turn_requests WHERE state = 2").fetchone()
        conn.execute(f"DROP SCHEMA {s} CASCADE")
    if ended is None or ended[0] != len(workload):
        raise RuntimeError(f"the raw loop ended {ended} of {len(workload)} turns")
    return len(workload) / elapsed


# -- toolang processes ------------------------------------------------------------------------


def node_config(schema: str, **runtime: Any) -> str:
    settings = {"executor": "echo", "lease_seconds": LEASE, "poll_seconds": 0.5, **runtime}
    return (
        '[store]\nbackend = "postgres"\n[plugins.store-postgres]\n'
        f'dsn = "${{TOOLANG_PG_DSN}}"\nschema = "{schema}"\n'
        '[log]\nlevel = "warning"\nformat = "json"\n[runtime]\n'
        + "".join(f"{k} = {json.dumps(v)}\n" for k, v in settings.items())
        + "[scheduler]\nmax_running = 32\n"
    )


class Cluster:
    """`toolang run` processes on one schema, each with its own home."""

    def __init__(self, root: Path, dsn: str, schema: str, **runtime: Any) -> None:
        self.root, self.dsn, self.schema, self.runtime = root, dsn, schema, runtime
        self.procs: list[subprocess.Popen[bytes]] = []
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
        self.env.update(TOOLANG_PG_DSN=dsn, TOOLANG_LOAD_PLUGINS="store-postgres")

    def start(self) -> subprocess.Popen[bytes]:
        home = self.root / f"node{len(self.procs)}"
        home.mkdir(parents=True)
        (home / "toolang.toml").write_text(node_config(self.schema, **self.runtime))
        proc = subprocess.Popen(
            [sys.executable, "-m", "toolang_core", "run", "--no-sources"],
            cwd=home,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=(home / "node.log").open("wb"),
        )
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


def wait_for(predicate: Any, timeout: float, what: str, every: float = 0.005) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(every)
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}")


def live_runs(store: PostgresStore) -> dict[str, int]:
    return {r.id: r.pid for r in store.list_runs(limit=100) if r.status == "running"}


def toolang_rate(dsn: str, workload: list[tuple[str, int]], processes: int, root: Path) -> float:
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    store = PostgresStore(dsn, schema_name=schema)
    cluster = Cluster(root / schema, dsn, schema)
    try:
        for _ in range(processes):
            cluster.start()
        wait_for(lambda: len(live_runs(store)) == processes, 120, "the runtimes", 0.05)
        names, now = Names(schema), time.time()
        params = [
            ingress.insert_params(
                new_turn_values(
                    NewTurnRequest(source="chat", thread_id=thread, input="x"),
                    SubmitRules("chat", priority),
                    f"b{i}",
                    now,
                ),
                {},
            )
            for i, (thread, priority) in enumerate(workload)
        ]
        with psycopg.connect(dsn, autocommit=True) as conn:
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(names(ingress.INSERT_SQL), params)
                began = time.perf_counter()  # committed at the end of this block
                cur.execute("SELECT pg_notify(%s, 'bench')", (names.channel,))
            wait_for(
                lambda: (
                    conn.execute(
                        names("SELECT count(*) FROM {s}.turn_requests WHERE status = 'completed'")
                    ).fetchone()[0]  # type: ignore[index]
                    == len(workload)
                ),
                600,
                "every turn to complete",
                0.02,
            )
            elapsed = time.perf_counter() - began
    finally:
        cluster.stop()
        store.close()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
    return len(workload) / elapsed


def slow_turn(store: PostgresStore, seconds: float, thread: str) -> str:
    request = NewTurnRequest(
        source="chat", thread_id=thread, input="slow", meta={"echo": {"delay_seconds": seconds}}
    )
    return store.submit(request, SubmitRules("chat", 40), now=time.time()).id


def running(store: PostgresStore, turn_id: str) -> Any:
    turn = store.get(turn_id)
    return turn if turn is not None and turn.status is TurnStatus.RUNNING else None


def cancel_latencies(dsn: str, count: int, root: Path) -> list[float]:
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    store = PostgresStore(dsn, schema_name=schema)
    cluster = Cluster(root / schema, dsn, schema)
    latencies = []
    try:
        for _ in range(2):
            cluster.start()
        wait_for(lambda: len(live_runs(store)) == 2, 120, "the runtimes", 0.05)
        for i in range(count):
            turn_id = slow_turn(store, 60.0, f"chat:c{i}")
            wait_for(lambda t=turn_id: running(store, t), 30, "the turn to start")
            time.sleep(0.05)  # the turn is inside its work, not just claimed
            asked = time.time()
            store.cancel(turn_id, now=asked)
            turn = wait_for(
                lambda t=turn_id: (x := store.get(t)) and x.status.is_terminal and x,
                30,
                "the cancel",
                0.002,
            )
            assert turn.status is TurnStatus.CANCELED, turn.status
            latencies.append(turn.finished_at - asked)
    finally:
        cluster.stop()
        store.close()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
    return latencies


def reclaim_times(dsn: str, count: int, root: Path) -> list[float]:
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    store = PostgresStore(dsn, schema_name=schema)
    cluster = Cluster(root / schema, dsn, schema)
    times = []
    try:
        for _ in range(3):
            cluster.start()
        for i in range(count):
            wait_for(lambda: len(live_runs(store)) == 3, 120, "three runtimes", 0.05)
            turn_id = slow_turn(store, 2 * LEASE, f"chat:r{i}")
            turn = wait_for(lambda t=turn_id: running(store, t), 30, "the turn to start")
            pid = live_runs(store)[turn.lease_owner]
            (victim,) = [p for p in cluster.procs if p.pid == pid]
            time.sleep(0.3 + (i % 4) * LEASE / 12)  # kill at different points of a beat
            killed = time.time()
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            again = wait_for(
                lambda t=turn_id: (x := store.get(t)) and x.attempt == 2 and x.started_at and x,
                60,
                "the takeover",
                0.005,
            )
            times.append(again.started_at - killed)
            wait_for(lambda t=turn_id: store.get(t).status.is_terminal, 60, "the rerun", 0.05)
            cluster.start()
    finally:
        cluster.stop()
        store.close()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
    return times


def agent_rates(dsn: str, args: argparse.Namespace) -> dict[str, Any]:
    """Part 4: agent turns (memory on) on each process count, printed as they come."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"agent turns (memory on), {args.agent_turns} turns over {args.agent_threads} "
          f"threads; cores seen: {cores}", flush=True)  # fmt: skip
    by: dict[str, dict[str, Any]] = {}
    for n in (int(p) for p in args.processes.split(",")):
        figures = agent_turns(dsn, n, args.agent_turns, args.agent_threads)
        by[str(n)] = figures
        trips = figures.get("round_trips_per_turn", "n/a (no pg_stat_statements)")
        print(
            f"{n} process(es): {figures['turns_per_s']:7.1f} agent turns/s   "
            f"CPU {figures['cpu_ms_per_turn']:.2f} ms/turn   round trips/turn {trips}",
            flush=True,
        )
        for per_turn, query in figures.get("top", [])[:6]:
            print(f"    {per_turn:5.2f}/turn  {query}")
    result: dict[str, Any] = {"cores": cores, "by_processes": by}
    if "1" in by and "2" in by:
        result["two_over_one"] = round(by["2"]["turns_per_s"] / by["1"]["turns_per_s"], 2)
        print(f"2 processes / 1: {result['two_over_one']} (goal >= 1.6 with >= 4 cores)")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument("--threads", type=int, default=1000)
    parser.add_argument("--cancels", type=int, default=40)
    parser.add_argument("--reclaims", type=int, default=4)
    parser.add_argument("--processes", default="1,2,4")
    parser.add_argument("--agent-turns", type=int, default=1000)
    parser.add_argument("--agent-threads", type=int, default=100)
    parser.add_argument("--agents-only", action="store_true", help="only part 4")
    args = parser.parse_args()

    cluster = None
    dsn = os.environ.get(ENV_DSN)
    if not dsn:
        cluster = CountingCluster(durable=True)
        dsn = cluster.start()
    try:
        agents = agent_rates(dsn, args)
        if args.agents_only:
            print(json.dumps({"bench": "postgres", "agent_turns": agents}))
            return
        rng = random.Random(42)
        workload = [
            (f"chat:{rng.randrange(args.threads)}", rng.choice([40, 30, 20, 10]))
            for _ in range(args.turns)
        ]
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            rates: dict[str, dict[str, float]] = {}
            for n in (int(p) for p in args.processes.split(",")):
                raw = raw_rate(dsn, workload, n)
                ours = toolang_rate(dsn, workload, n, root)
                rates[str(n)] = {
                    "raw_per_s": round(raw),
                    "toolang_per_s": round(ours),
                    "ratio": round(ours / raw, 2),
                }
                print(
                    f"{n} process(es): raw {raw:7.0f}/s   toolang {ours:7.0f}/s   "
                    f"ratio {ours / raw:.2f}",
                    flush=True,
                )
            cancels = cancel_latencies(dsn, args.cancels, root)
            cancel = {
                "p50_ms": round(1000 * statistics.median(cancels), 1),
                "p99_ms": round(1000 * percentile(cancels, 0.99), 1),
                "max_ms": round(1000 * max(cancels), 1),
            }
            print(f"cross-node cancel: p50 {cancel['p50_ms']} ms, p99 {cancel['p99_ms']} ms")
            reclaims = reclaim_times(dsn, args.reclaims, root)
            reclaim = {
                "lease_s": LEASE,
                "times_s": [round(t, 2) for t in reclaims],
                "max_s": round(max(reclaims), 2),
            }
            print(f"reclaim after SIGKILL (lease {LEASE:g} s): {reclaim['times_s']} s")
    finally:
        if cluster is not None:
            cluster.stop()
    goals = {
        "agent_round_trips_le_12": all(
            r.get("round_trips_per_turn", 0) <= 12 for r in agents["by_processes"].values()
        ),
        "throughput_ge_half_raw": all(r["ratio"] >= 0.5 for r in rates.values()),
        "cancel_p99_lt_100ms": cancel["p99_ms"] < 100,
        "reclaim_le_lease_plus_1s": reclaim["max_s"] <= LEASE + 1,
    }
    print(
        json.dumps(
            {
                "bench": "postgres",
                "turns": args.turns,
                "threads": args.threads,
                "throughput": rates,
                "cancel": cancel,
                "reclaim": reclaim,
                "agent_turns": agents,
                "goals": goals,
            }
        )
    )


if __name__ == "__main__":
    main()
