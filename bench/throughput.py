#!/usr/bin/env python3
"""Durable turns per second, end to end, next to the raw SQLite cycle (same run).

toolang: a producer submits N turn requests through the inbox (each a committed
transaction) while a runtime on the same SQLite file admits them, runs the built-in
echo executor (which records one step) and records each turn completed — every row
written, WAL mode, synchronous=NORMAL. The figure is N / (first submit → last completed).

raw: the same file format and pragmas, one plain sqlite3 connection, per row: INSERT,
UPDATE … claim … RETURNING, UPDATE … complete — three autocommit transactions, no
scheduler, no Python objects: the floor of what a durable queue on SQLite costs.

    python3 bench/throughput.py [--turns 5000] [--threads 200] [--repeat 5]

Goal: toolang >= 0.5 x raw. The last line is a JSON object with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolang_core.cli.cmd_run import freeze_heap  # what `toolang run` does
from toolang_core.config import ToolangConfig
from toolang_core.config.model import RuntimeConfig, SchedulerConfig
from toolang_core.logs import configure_logging
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnFilter, TurnStatus

RAW_SCHEMA = """
CREATE TABLE IF NOT EXISTS q (
    id INTEGER PRIMARY KEY, thread TEXT NOT NULL, payload TEXT NOT NULL,
    state INTEGER NOT NULL DEFAULT 0, owner TEXT, created REAL, started REAL, finished REAL
);
CREATE INDEX IF NOT EXISTS q_queued ON q (id) WHERE state = 0;
CREATE UNIQUE INDEX IF NOT EXISTS q_running ON q (thread) WHERE state = 1;
"""


def raw_cycle(path: Path, turns: int, threads: int) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.executescript(RAW_SCHEMA)
    start = time.perf_counter()
    for i in range(turns):
        conn.execute(
            "INSERT INTO q (thread, payload, created) VALUES (?, ?, ?)",
            (f"chat:{i % threads}", f"turn {i}", time.time()),
        )
        row = conn.execute(
            "UPDATE q SET state = 1, owner = 'w', started = ? WHERE id = "
            "(SELECT id FROM q WHERE state = 0 ORDER BY id LIMIT 1) RETURNING id",
            (time.time(),),
        ).fetchone()
        conn.execute(
            "UPDATE q SET state = 2, finished = ? WHERE id = ? AND state = 1", (time.time(), row[0])
        )
    elapsed = time.perf_counter() - start
    conn.close()
    return turns / elapsed


def toolang_cycle(home: Path, turns: int, threads: int) -> float:
    config = ToolangConfig(
        base_dir=home,
        home=home / ".toolang",
        scheduler=SchedulerConfig(max_running=16),
        runtime=RuntimeConfig(executor="echo", poll_seconds=0.05),
    )
    runtime = Runtime.with_plugins(config, env={})
    inbox = runtime.open_inbox()

    async def run() -> float:
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=(), on_started=freeze_heap))
        while not runtime.admitting:  # the clock starts once start-up is over
            await asyncio.sleep(0.001)
        start = time.perf_counter()
        for i in range(turns):
            inbox.submit(
                NewTurnRequest(source="chat", thread_id=f"chat:{i % threads}", input=f"turn {i}")
            )
            if i % 25 == 24:  # each submit wakes the runtime; let it work while we produce
                await asyncio.sleep(0)
        scheduler = runtime.scheduler
        assert scheduler is not None
        while scheduler.admitted < turns or scheduler.running:  # a turn's task ends after
            await asyncio.sleep(0.002)  # its terminal state is committed
        elapsed = time.perf_counter() - start
        stop.set()
        await serving
        return turns / elapsed

    rate = asyncio.run(run())
    finished = inbox.store.list_turns(TurnFilter(limit=turns + 1))
    assert len(finished) == turns
    assert all(t.status is TurnStatus.COMPLETED for t in finished)
    assert all(t.output == t.input for t in finished)
    inbox.store.close()
    return rate


def main() -> None:
    configure_logging(level="warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)  # this VM's speed drifts: 5 pairs
    args = parser.parse_args()
    raw, ours = [], []
    for n in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            raw.append(raw_cycle(Path(tmp) / "raw.db", args.turns, args.threads))
            ours.append(toolang_cycle(Path(tmp), args.turns, args.threads))
        print(
            f"run {n + 1}: toolang {ours[-1]:8.0f} turns/s   raw {raw[-1]:8.0f} cycles/s   "
            f"ratio {ours[-1] / raw[-1]:.2f}"
        )
    figures = {
        "turns": args.turns,
        "threads": args.threads,
        "repeat": args.repeat,
        "toolang_turns_per_s_median": round(statistics.median(ours)),
        "raw_cycles_per_s_median": round(statistics.median(raw)),
        "ratio_median": round(statistics.median(o / r for o, r in zip(ours, raw, strict=True)), 3),
        "goal_ratio": 0.5,
    }
    print(
        f"median: toolang {figures['toolang_turns_per_s_median']} turns/s, raw "
        f"{figures['raw_cycles_per_s_median']} cycles/s, ratio {figures['ratio_median']} "
        "(goal >= 0.5)"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
