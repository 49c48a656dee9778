#!/usr/bin/env python3
"""Chat admission latency while a large backlog of chores waits.

A real `toolang run` process serves a SQLite store in which 10,000 (then 100,000) chore
requests are queued, each on its own thread; the chore group's budget is one running
turn, held by a chore that never finishes, so the backlog stays queued. Chat requests
are then submitted one at a time from this process, each on a new thread. Admission
latency is the request's ``started_at - created_at`` as the store recorded them (same
machine, same clock): from the committed submit to the committed claim, including the
wake-up of the runtime.

    python3 bench/latency.py [--chats 300] [--sizes 10000,100000]

Goal: p99 < 20 ms at 10,000 and sub-linear growth. The last line is a JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, SubmitRules, TurnStatus

CONFIG = """
[runtime]
executor = "echo"
poll_seconds = 0.5

[scheduler]
max_running = 8

[scheduler.groups.chore]
max_running = 1
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def fill(store: SQLiteStore, start: int, end: int) -> None:
    rules = SubmitRules("chore", 10)
    for i in range(start, end):
        store.submit(
            NewTurnRequest(
                source="chore",
                thread_id=f"chore:{i}",
                input="sweep",
                meta={"echo": {"delay_seconds": 86400}},
            ),
            rules,
            now=time.time(),
        )


def measure(store: SQLiteStore, chats: int, offset: int) -> list[float]:
    rules = SubmitRules("chat", 40)
    latencies = []
    for j in range(chats):
        turn_id = store.submit(
            NewTurnRequest(source="chat", thread_id=f"chat:{offset + j}", input="hi"),
            rules,
            now=time.time(),
        ).id
        deadline = time.monotonic() + 30
        while True:
            turn = store.get(turn_id)
            if turn.status is not TurnStatus.QUEUED:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"chat {turn_id} was not admitted within 30 s")
            time.sleep(0.0005)
        latencies.append((turn.started_at - turn.created_at) * 1000)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=300)
    parser.add_argument("--sizes", default="10000,100000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    figures: dict[str, object] = {"chats_per_size": args.chats}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "toolang.toml").write_text(CONFIG)
        store = SQLiteStore(home / ".toolang" / "toolang.db")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
        env.update(TOOLANG_LOAD_PLUGINS="", PYTHONPATH=str(Path(__file__).resolve().parent.parent))
        proc = subprocess.Popen(
            [sys.executable, "-m", "toolang_core", "run", "--no-sources"],
            cwd=home,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            filled = 0
            for size in sizes:
                started = time.perf_counter()
                fill(store, filled, size)
                filled = size
                queued = dict(store.group_load()).get("chore", (0, 0))
                print(
                    f"{size} chores submitted in {time.perf_counter() - started:.1f} s; "
                    f"chore group: {queued[0]} running, {queued[1]} queued"
                )
                measure(store, 20, offset=size * 10)  # warm-up
                latencies = measure(store, args.chats, offset=size * 10 + 100)
                p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
                print(
                    f"  chat admission with {size} chores queued: p50 {p50:.2f} ms  "
                    f"p99 {p99:.2f} ms  max {max(latencies):.2f} ms  "
                    f"mean {statistics.mean(latencies):.2f} ms"
                )
                figures[f"p50_ms_{size}"] = round(p50, 3)
                figures[f"p99_ms_{size}"] = round(p99, 3)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
            store.close()
    if len(sizes) >= 2:
        small, large = sizes[0], sizes[-1]
        growth = figures[f"p99_ms_{large}"] / max(figures[f"p99_ms_{small}"], 1e-9)  # type: ignore[operator]
        figures["p99_growth"] = round(growth, 2)
        figures["backlog_growth"] = large / small
        print(
            f"p99 grew {growth:.2f}x while the backlog grew {large / small:.0f}x "
            "(goal: p99 < 20 ms at the smaller size, sub-linear growth)"
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
