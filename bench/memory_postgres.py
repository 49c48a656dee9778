#!/usr/bin/env python3
"""Recall, listing and write latency of the PostgreSQL memory plugin (toolang-memory-postgres).

``bench/memory.py``'s corpus (varied, realistic entries; natural-language queries) is
written for two agents, each holding half the table (a scope is not the whole table:
what PostgreSQL estimates for one agent's and owner's entries decides its plans), the
table is analyzed (as autovacuum does), then at each size:

    recall        p50 / p95 / max of ``recall`` for the bench's queries (default limits)
    list          p50 of listing the newest 20 entries of the agent
    write-single  ms per entry written one per call (each its own transaction)
    write-capped  the same with ``max_entries`` set to the entries the agent holds:
                  each write deletes the longest unused one

On ``--dsn``, ``$TOOLANG_PG_DSN`` or a throwaway server started for the run (fsync on:
commits are real), in a schema of its own dropped afterwards. memory-sqlite's goal,
recall p95 < 10 ms at 100,000 entries, is printed against the largest size.

    python3 bench/memory_postgres.py [--sizes 10000 50000] [--queries 200] [--single 200]

The last line is JSON.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory import Corpus, percentile

from toolang_core.memory import (
    MemoryEntry,
    MemoryListRequest,
    MemoryRecallRequest,
    MemoryWriteBatch,
)

AGENTS = ("bench", "other")
"""Whose entries: the first is measured, the second holds as many."""
BATCH = 500
GOAL_P95_MS = 10.0


def batch(agent: str, texts: list[str], thread: str) -> MemoryWriteBatch:
    entries = tuple(MemoryEntry(text=t) for t in texts)
    return MemoryWriteBatch(f"toolang:agent/{agent}", agent, entries, thread_id=thread)


def load(memory: Any, corpus: Corpus, count: int) -> None:
    """``count`` more entries for each agent, in batches of :data:`BATCH`."""
    for agent in AGENTS:
        for first in range(0, count, BATCH):
            texts = [corpus.entry() for _ in range(min(BATCH, count - first))]
            memory.remember_now(batch(agent, texts, f"chat:{first // 1000}"))


def timed(calls: list[Any]) -> list[float]:
    """Milliseconds each of ``calls`` took."""
    times = []
    for call in calls:
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def held_by(dsn: str, schema: str) -> int:
    """The entries the measured agent holds (the cap kept them at its limit)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        sql = f'SELECT count(*) FROM "{schema}".memory_entries WHERE agent_id = %s'
        return int(conn.execute(sql, [AGENTS[0]]).fetchone()[0])


def analyze(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        for table in ("memory_entries", "memory_uses"):
            conn.execute(f'ANALYZE "{schema}".{table}')


def measure(
    memory: Any, plugin: Any, corpus: Corpus, queries: list[str], *, single: int, held: int
) -> tuple[dict[str, float], int]:
    """One size's figures, and the entries the agent holds after its writes."""
    requests = [MemoryRecallRequest(f"toolang:agent/{AGENTS[0]}", AGENTS[0], q) for q in queries]
    timed([functools.partial(memory.recall_now, r) for r in requests[:20]])  # warm up
    recall = timed([functools.partial(memory.recall_now, r) for r in requests])
    listing = MemoryListRequest(agent_id=AGENTS[0], limit=20)
    listed = timed([functools.partial(memory.list_entries, listing)] * 50)
    writes = [batch(AGENTS[0], [corpus.entry()], "chat:single") for _ in range(single)]
    one = timed([functools.partial(memory.remember_now, b) for b in writes])
    held += single  # (the single writes are the agent's too)
    capped_memory = plugin(max_entries=held)
    writes = [batch(AGENTS[0], [corpus.entry()], "chat:capped") for _ in range(single)]
    capped = timed([functools.partial(capped_memory.remember_now, b) for b in writes])
    row = {
        "recall_p50_ms": round(statistics.median(recall), 3),
        "recall_p95_ms": round(percentile(recall, 95), 3),
        "recall_max_ms": round(max(recall), 3),
        "list_p50_ms": round(statistics.median(listed), 3),
        "write_single_p50_ms": round(statistics.median(one), 3),
        "write_capped_p50_ms": round(statistics.median(capped), 3),
    }
    return row, held


def main() -> None:
    import psycopg

    from toolang_memory_postgres import NAME, MemoryPostgresSettings
    from toolang_memory_postgres.memory import PostgresMemory
    from toolang_memory_postgres.schema import MIGRATIONS
    from toolang_store_postgres.cluster import ENV_DSN, ThrowawayCluster
    from toolang_store_postgres.plugin_tables import PostgresPluginDatabases, plugin_schema

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--single", type=int, default=200)
    parser.add_argument("--dsn", help="PostgreSQL server (default: $TOOLANG_PG_DSN or a throwaway)")
    args = parser.parse_args()

    cluster = None
    dsn = args.dsn or os.environ.get(ENV_DSN)
    if not dsn:
        cluster = ThrowawayCluster(durable=True)
        dsn = cluster.start()
    store_schema = f"bench_{uuid.uuid4().hex[:12]}"
    schema = plugin_schema(store_schema, NAME)
    databases = PostgresPluginDatabases(dsn, store_schema=store_schema)
    corpus = Corpus()
    queries = [corpus.query() for _ in range(args.queries)]
    results: dict[str, dict[str, float]] = {}
    opened: list[Any] = []

    def plugin(**settings: Any) -> Any:
        made = PostgresMemory(
            lambda: databases.open(NAME, MIGRATIONS), MemoryPostgresSettings(**settings)
        )
        opened.append(made)
        return made

    try:
        memory = plugin()
        held = 0
        for size in sorted(args.sizes):
            load(memory, corpus, size - held)
            held = size
            analyze(dsn, schema)
            row, held = measure(memory, plugin, corpus, queries, single=args.single, held=held)
            assert held_by(dsn, schema) == held, (held_by(dsn, schema), held)
            results[str(size)] = row
            print(
                f"{size:>7} entries an agent (x{len(AGENTS)})  recall p50 "
                f"{row['recall_p50_ms']:6.2f} ms  p95 {row['recall_p95_ms']:6.2f} ms  "
                f"max {row['recall_max_ms']:6.2f} ms  list p50 {row['list_p50_ms']:5.2f} ms  "
                f"write p50 {row['write_single_p50_ms']:5.2f} ms  at a cap of {held:,} "
                f"{row['write_capped_p50_ms']:5.2f} ms",
                flush=True,
            )
    finally:
        for made in opened:
            made.close()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        if cluster is not None:
            cluster.stop()
    largest = str(max(args.sizes))
    p95 = results[largest]["recall_p95_ms"]
    verdict = "met" if p95 < GOAL_P95_MS else "MISSED"
    print(f"memory-sqlite's goal, recall p95 < {GOAL_P95_MS:g} ms: {verdict} ({p95} ms)")
    print(json.dumps({"bench": "memory_postgres", "agents": len(AGENTS), "sizes": results}))


if __name__ == "__main__":
    main()
