"""A plain-sqlite3 reference recorder: the durable writes a minimal agent turn needs.

What any durable agent runtime must write for one turn with one tool call, written
with nothing in between: the request (``queued``), the tool call's intent (before the
tool runs), its result, and the finish (answer and ``completed``) — four commits in
one SQLite file in WAL mode, ``synchronous`` as the execution store's (``normal`` by
default). The turns are recorded as ``agent_turns.py --shape ordered`` submits them:
``threads`` conversations of ``turns_per_thread`` turns, one thread's turns in order,
round-robin over the threads. Its turns/s is the ceiling the runtime is measured
against (``agent_turns.py`` prints the ratios).

    python3 bench/reference.py [--threads 200] [--turns-per-thread 10]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE turns (
    id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, input TEXT NOT NULL,
    status TEXT NOT NULL, output TEXT, created_at REAL NOT NULL, updated_at REAL NOT NULL
);
CREATE INDEX turns_thread ON turns (thread_id, created_at);
CREATE TABLE steps (
    id INTEGER PRIMARY KEY, turn_id TEXT NOT NULL, kind TEXT NOT NULL,
    idempotency_key TEXT UNIQUE, data TEXT NOT NULL, created_at REAL NOT NULL
);
CREATE INDEX steps_turn ON steps (turn_id);
"""

COMMITS_PER_TURN = 4


def reference_cycle(
    home: Path, threads: int, turns_per_thread: int, *, synchronous: str = "normal"
) -> dict[str, Any]:
    """Record ``threads * turns_per_thread`` turns in ``home/reference.db``; their
    turns/s and CPU ms per turn."""
    conn = sqlite3.connect(home / "reference.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.executescript(SCHEMA)
    turns = threads * turns_per_thread
    wall, cpu = time.perf_counter(), time.process_time()
    for n in range(turns_per_thread):
        for thread in range(threads):
            turn_id = f"t{thread}-{n}"
            a, b = thread * turns_per_thread + n, n + 1
            now = time.time()
            with conn:  # the request, durable before it is acknowledged
                conn.execute("BEGIN IMMEDIATE")
                conn.execute(
                    "INSERT INTO turns VALUES (?, ?, ?, 'queued', NULL, ?, ?)",
                    (turn_id, f"chat:{thread}", f"add {a} {b}", now, now),
                )
            with conn:  # the tool call's intent, durable before the tool runs
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("UPDATE turns SET status = 'running' WHERE id = ?", (turn_id,))
                conn.execute(
                    "INSERT INTO steps (turn_id, kind, idempotency_key, data, created_at) "
                    "VALUES (?, 'tool_intent', ?, ?, ?)",
                    (turn_id, f"{turn_id}:c1", json.dumps({"a": a, "b": b}), now),
                )
            with conn:  # its result
                conn.execute("BEGIN IMMEDIATE")
                conn.execute(
                    "INSERT INTO steps (turn_id, kind, idempotency_key, data, created_at) "
                    "VALUES (?, 'tool_result', ?, ?, ?)",
                    (turn_id, f"{turn_id}:c1:result", json.dumps({"output": a + b}), now),
                )
            with conn:  # the finish: the answer, and the turn completed
                conn.execute("BEGIN IMMEDIATE")
                conn.execute(
                    "UPDATE turns SET status = 'completed', output = ?, updated_at = ? "
                    "WHERE id = ?",
                    (f"the sum is {a + b}", time.time(), turn_id),
                )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    done = conn.execute("SELECT count(*) FROM turns WHERE status = 'completed'").fetchone()[0]
    assert done == turns, (done, turns)
    conn.close()
    return {
        "turns_per_s": turns / wall,
        "cpu_ms_per_turn": 1000 * cpu / turns,
        "commits_per_turn": COMMITS_PER_TURN,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--turns-per-thread", type=int, default=10)
    parser.add_argument("--synchronous", default="normal", choices=("normal", "full"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        figures = reference_cycle(
            Path(tmp), args.threads, args.turns_per_thread, synchronous=args.synchronous
        )
    print(json.dumps({k: round(v, 3) for k, v in figures.items()}))


if __name__ == "__main__":
    main()
