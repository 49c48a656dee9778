#!/usr/bin/env python3
"""Resident memory of a serving runtime over many agent turns (issue #38 goal 5).

The runtime is ``bench/agent_turns.py``'s: every installed plugin loaded through its
entry point, the starter ``toolang.toml`` (all five tool-hook plugins, memory on), an
instant scripted model at the model boundary, each turn one call of the ``add`` tool
and a final answer, delivered in-process; the heap frozen once started, as ``toolang
run`` does. No turn source runs (turns are submitted to the inbox by this script, as
the HTTP server or another process would). The bench's own plugin keeps nothing per
turn: each answer is checked when it is delivered and forgotten, so what grows is the
runtime's.

Turns go in rounds of ``--threads`` (one turn per thread, each round waited for), and
the process's RSS (``/proc/self/status`` VmRSS) is printed every ``--every`` turns,
with the peak (VmHWM) at the end. A least-squares slope over the samples after the
first (the first is warm-up: caches filling, the memory index's first pages) says
whether it grows: ``grows`` when the fitted line rises more than ``--tolerance-mb``
(default 1.0) per 10,000 turns.

    python3 bench/soak.py                      # 10,000 turns: peak RSS (goal < 100 MB)
    python3 bench/soak.py --turns 50000        # the soak: RSS every 5,000 turns, slope
    python3 bench/soak.py --tracemalloc        # and the 15 lines whose allocations grew
                                               # most between the first sample and the end

The last line is a JSON object with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import compose, memory_off, started, starter_text
from agent_turns import ADDER, BENCH_SETTINGS, Workload

from toolang_core import TurnRequest, hookimpl
from toolang_core.logs import configure_logging
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest


def status_kb(field: str) -> int:
    """A ``/proc/self/status`` figure in kB (VmRSS: now; VmHWM: the peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status (Linux only)")


def slope_per_10k(points: list[tuple[int, float]]) -> float:
    """Least-squares slope of (turns, MB), in MB per 10,000 turns."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    den = sum((x - mean_x) ** 2 for x, _ in points)
    num = sum((x - mean_x) * (y - mean_y) for x, y in points)
    return 10_000 * num / den if den else 0.0


class Forgetful(Workload):
    """The agent-turn bench's plugin, keeping nothing per turn: an answer is checked
    against what its turn expects when it is delivered, then dropped."""

    def __init__(self) -> None:
        super().__init__()
        self.expected: dict[str, str] = {}
        self.delivered = 0
        self.wrong: list[str] = []

    @hookimpl
    def toolang_deliver_turn(self, turn: TurnRequest, runtime: Runtime) -> None:
        want = self.expected.pop(turn.id, None)
        if want is not None and turn.output != want:
            self.wrong.append(f"{turn.id}: {turn.output!r} != {want!r}")
        self.delivered += 1
        waiter = self.waiters.pop(turn.id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


def build_runtime(home: Path, workload: Forgetful, *, memory: bool) -> Runtime:
    """``bench/agent_turns.py``'s runtime, its HTTP server on a free port (it serves:
    the server plugin listens from start-up, as under ``toolang run``)."""

    def edit(text: str) -> str:
        text = text.replace("port = 8765", "port = 0", 1)
        return text if memory else memory_off(text)

    (home / "agents" / "adder").mkdir(parents=True)
    (home / "agents" / "adder" / "AGENT.md").write_text(ADDER)
    return compose(home, starter_text(edit) + BENCH_SETTINGS, workload)


def soak(home: Path, args: argparse.Namespace) -> dict[str, Any]:
    workload = Forgetful()
    runtime = build_runtime(home, workload, memory=not args.memory_off)
    inbox = runtime.open_inbox()
    samples: list[tuple[int, float]] = []
    snapshots: list[tracemalloc.Snapshot] = []

    async def run() -> None:
        stop = asyncio.Event()
        serving = await started(runtime, stop)
        loop = asyncio.get_running_loop()
        done = 0
        began = time.perf_counter()
        while done < args.turns:
            waiters = []
            for t in range(min(args.threads, args.turns - done)):
                i = done + t
                submitted = inbox.submit(
                    NewTurnRequest(
                        source="chat", thread_id=f"chat:{t}", input=f"add {i} {2 * i + 1}"
                    )
                )
                workload.expected[submitted.id] = f"the sum is {3 * i + 1}"
                waiter = loop.create_future()
                workload.waiters[submitted.id] = waiter
                waiters.append(waiter)
            done += len(waiters)
            await asyncio.gather(*waiters)
            if done % args.every == 0 or done == args.turns:
                gc.collect()
                rss = status_kb("VmRSS") / 1024
                samples.append((done, rss))
                rate = done / (time.perf_counter() - began)
                print(f"{done:>7} turns  RSS {rss:7.1f} MB  ({rate:,.0f} turns/s)", flush=True)
                if args.tracemalloc:  # traced from the first sample on: [first, latest]
                    if not tracemalloc.is_tracing():
                        tracemalloc.start(10)
                    snapshots[1:] = [tracemalloc.take_snapshot()]
        stop.set()
        await serving

    asyncio.run(run())
    store = inbox.store
    store.close()
    assert not workload.wrong, workload.wrong[:3]
    assert workload.delivered == args.turns, (workload.delivered, args.turns)
    assert workload.tool_calls == args.turns, (workload.tool_calls, args.turns)
    peak = max(status_kb("VmHWM") / 1024, *(mb for _, mb in samples))
    slope = slope_per_10k(samples[1:])
    result = {
        "turns": args.turns,
        "memory": not args.memory_off,
        "peak_rss_mb": round(peak, 1),
        "rss_mb": [[n, round(mb, 1)] for n, mb in samples],
        "slope_mb_per_10k_turns": round(slope, 2),
        "grows": slope > args.tolerance_mb,
    }
    if args.tracemalloc and len(snapshots) == 2:
        grew = snapshots[1].compare_to(snapshots[0], "lineno")
        print("allocations that grew most (after the first sample → the end):")
        for stat in grew[:15]:
            print(f"  {stat}")
        tracemalloc.stop()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=None, help="RSS every this many turns")
    parser.add_argument("--threads", type=int, default=200, help="turns in flight at once")
    parser.add_argument("--memory-off", action="store_true", help="no memory plugin")
    parser.add_argument("--tolerance-mb", type=float, default=1.0)
    parser.add_argument("--tracemalloc", action="store_true")
    args = parser.parse_args()
    if args.every is None:
        args.every = 5_000 if args.turns > 10_000 else 1_000
    args.every = max(args.threads, args.every // args.threads * args.threads)
    configure_logging(level="warning")
    with tempfile.TemporaryDirectory() as tmp:
        result = soak(Path(tmp), args)
    print(
        f"peak RSS {result['peak_rss_mb']} MB after {args.turns:,} turns (goal < 100 MB); "
        f"slope {result['slope_mb_per_10k_turns']:+.2f} MB per 10,000 turns: "
        + ("grows" if result["grows"] else "flat")
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
