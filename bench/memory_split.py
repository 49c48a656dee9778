#!/usr/bin/env python3
"""Where memory's time goes in an agent turn: per thread, per database, per turn.

Runs ``bench/agent_turns.py``'s ordered workload (``--threads`` conversations, each
thread's next turn submitted when its previous answer is delivered) in one process,
memory off, then with ``--null-memory``'s plugin (the runtime's side of memory, no
plugin work), then memory on (toolang-memory-sqlite), ``--repeat`` times interleaved,
and prints for each (after a short run of memory on that is not counted: the first
run pays every import and first call) the CPU time per turn of:

    main      the event loop's thread (the runtime, the store's statements)
    memory    the jobs of memory-sqlite's database thread (recalls and writes)
    other     the rest of the process (the store's checkpoint thread, ...)

(each from the runtime's start to its stop: a start and a stop's share is in them)

and the bytes the process wrote (``wchar``) per turn. On a loaded machine compare the
variants' shares, not absolute times. ``--statements`` adds one more run of each
variant with a trace callback on every SQLite connection: statements per turn by
file and kind (``--`` lines are SQLite's own nested statements, e.g. FTS5's reads of
its index for ``bm25``); the trace slows the run, so it is separate from the CPU runs.
``--profile DIR`` writes a cProfile of the main thread and of the database thread of
each variant's last run to DIR (``pstats`` files).

``--recall-only`` measures recall alone instead, without a runtime: the same turns'
recalls and writes replayed on the plugin in one thread (each round, every thread
recalls ``add a b`` then writes its exchange, as the ordered workload does), printing
recall's CPU per call and the plans it took. ``--setting KEY=VALUE,...`` (repeatable)
runs one variant per value with those ``[plugins.memory-sqlite]`` settings (empty: the
defaults), interleaved ``--repeat`` times, e.g. ``--setting ranked_matches=1000
--setting ''``.

    python3 bench/memory_split.py [--turns 2000] [--threads 200] [--repeat 2]
        [--statements] [--profile DIR] [--recall-only [--setting KEY=VALUE,...]...]

The last line is a JSON object with the medians.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_turns import agent_cycle

from toolang_core.logs import configure_logging
from toolang_core.memory import (
    MemoryEntry,
    MemoryLimits,
    MemoryRecallRequest,
    MemoryWriteBatch,
)
from toolang_memory_sqlite import MemorySQLiteSettings, dbthread
from toolang_memory_sqlite.memory import SQLiteMemory

VARIANTS = {"off": (False, False), "null": (True, True), "on": (True, False)}
"""Variant: (memory on, null plugin)."""


class Split:
    """CPU of the database thread's jobs, and statements by (file, kind) when traced."""

    def __init__(self) -> None:
        self.memory_cpu = 0.0
        self.statements: collections.Counter[tuple[str, str]] = collections.Counter()
        self.trace = False
        self.profile: cProfile.Profile | None = None

    def install(self) -> None:
        split = self
        post = dbthread.DatabaseThread.post
        run = dbthread.DatabaseThread._run

        def timed_post(thread: dbthread.DatabaseThread, job: Callable[[], object]) -> None:
            def timed() -> object:
                began = time.thread_time()
                try:
                    return job()
                finally:
                    split.memory_cpu += time.thread_time() - began

            post(thread, timed)

        def profiled_run(thread: dbthread.DatabaseThread) -> None:
            profile = split.profile
            if profile is None:
                return run(thread)
            profile.enable()
            try:
                return run(thread)
            finally:
                profile.disable()

        dbthread.DatabaseThread.post = timed_post  # type: ignore[method-assign]
        dbthread.DatabaseThread._run = profiled_run  # type: ignore[method-assign]
        connect = sqlite3.connect

        def traced_connect(target: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
            conn = connect(target, *args, **kwargs)
            name = Path(str(target)).name

            def trace(sql: str) -> None:
                words = sql.split(None, 1)
                split.statements[(name, words[0].upper() if words else "?")] += 1

            if split.trace:
                conn.set_trace_callback(trace)
            return conn

        sqlite3.connect = traced_connect  # type: ignore[assignment]


def written_bytes() -> int:
    """The bytes this process has written so far (``/proc/self/io``'s ``wchar``)."""
    with open("/proc/self/io") as io:
        for line in io:
            if line.startswith("wchar"):
                return int(line.split()[1])
    return 0


def one_run(
    split: Split, variant: str, args: argparse.Namespace, profile: Path | None
) -> dict[str, float]:
    memory, null = VARIANTS[variant]
    turns = args.threads * max(1, args.turns // args.threads)
    split.memory_cpu = 0.0
    split.profile = cProfile.Profile() if profile is not None else None
    main = cProfile.Profile() if profile is not None else None
    process, thread, wrote = time.process_time(), time.thread_time(), written_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        if main is not None:
            main.enable()
        figures = agent_cycle(
            Path(tmp),
            turns,
            args.threads,
            0,
            memory=memory,
            shape="ordered",
            null_memory=null,
        )
        if main is not None:
            main.disable()
    process, thread = time.process_time() - process, time.thread_time() - thread
    wrote = written_bytes() - wrote
    if profile is not None and main is not None and split.profile is not None:
        main.dump_stats(profile / f"{variant}_main.pstats")
        if memory and not null:
            split.profile.dump_stats(profile / f"{variant}_memory_thread.pstats")
    per = 1000 / turns
    return {
        "turns_per_s": figures["turns_per_s"],
        "main_ms": thread * per,
        "memory_ms": split.memory_cpu * per,
        "other_ms": (process - thread - split.memory_cpu) * per,
        "process_ms": process * per,
        "bytes": wrote / turns,
    }


def settings_of(text: str) -> MemorySQLiteSettings:
    """``--setting``'s ``KEY=VALUE,...`` as the plugin's settings (numbers as numbers)."""
    values: dict[str, Any] = {}
    for pair in filter(None, text.split(",")):
        key, _, value = pair.partition("=")
        values[key.strip()] = json.loads(value)
    return MemorySQLiteSettings(**values)


def recall_replay(settings: MemorySQLiteSettings, args: argparse.Namespace) -> dict[str, Any]:
    """The ordered workload's recalls and writes on the plugin alone, in this thread:
    recall CPU per call, and how many recalls took each plan."""
    per_thread = max(1, args.turns // args.threads)
    spent = 0.0
    modes: collections.Counter[str] = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        memory = SQLiteMemory(Path(tmp) / "memory.db", settings)
        try:
            for n in range(per_thread):
                for thread in range(args.threads):
                    a, b = thread * per_thread + n, n + 1
                    request = MemoryRecallRequest(
                        agent_uri="toolang:agent/adder",
                        agent_id="adder",
                        query_text=f"add {a} {b}",
                        limits=MemoryLimits(),
                    )
                    began = time.thread_time()
                    result = memory.recall_now(request)
                    spent += time.thread_time() - began
                    modes[str(result.diagnostics.get("mode"))] += 1
                    answer = f"user: add {a} {b}\nadder: the sum is {a + b}"
                    memory.remember_now(
                        MemoryWriteBatch(
                            agent_uri="toolang:agent/adder",
                            agent_id="adder",
                            entries=(MemoryEntry(text=answer, kind="exchange"),),
                            thread_id=f"chat:ordered-{thread}",
                            origin="turn",
                        )
                    )
        finally:
            memory.close()
    return {"recall_ms": 1000 * spent / (per_thread * args.threads), "modes": dict(modes)}


def recall_only(args: argparse.Namespace) -> None:
    variants = args.setting or [""]
    runs: dict[str, list[float]] = {v: [] for v in variants}
    for n in range(args.repeat):
        for variant in variants:
            figures = recall_replay(settings_of(variant), args)
            runs[variant].append(figures["recall_ms"])
            print(
                f"run {n + 1} settings [{variant or 'defaults'}]: recall "
                f"{figures['recall_ms']:.4f} ms CPU each  plans {figures['modes']}"
            )
    medians = {v or "defaults": round(statistics.median(r), 4) for v, r in runs.items()}
    print(json.dumps({"turns": args.turns, "threads": args.threads, "recall_ms_median": medians}))


def main() -> None:
    configure_logging(level="error")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--statements", action="store_true")
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--recall-only", action="store_true")
    parser.add_argument("--setting", action="append")
    args = parser.parse_args()
    if args.recall_only:
        recall_only(args)
        return
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    split = Split()
    split.install()
    runs: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
    # A first run pays the imports and first calls of everything: not counted.
    one_run(split, "on", argparse.Namespace(**{**vars(args), "turns": args.threads}), None)
    for n in range(args.repeat):
        for variant in VARIANTS:
            last = n == args.repeat - 1
            figures = one_run(split, variant, args, args.profile if last else None)
            runs[variant].append(figures)
            print(
                f"run {n + 1} memory {variant:4}: {figures['turns_per_s']:6.0f} turns/s  CPU/turn "
                f"main {figures['main_ms']:.3f}  memory thread {figures['memory_ms']:.3f}  "
                f"other {figures['other_ms']:.3f}  = {figures['process_ms']:.3f} ms   "
                f"{figures['bytes'] / 1024:.1f} KiB written/turn"
            )
    result: dict[str, Any] = {"turns": args.turns, "threads": args.threads, "repeat": args.repeat}
    for variant, figures in runs.items():
        for key in figures[0]:
            value = statistics.median(f[key] for f in figures)
            result[f"{variant}_{key}_median"] = round(value, 4 if key.endswith("_ms") else 1)
    if args.statements:
        split.trace = True
        for variant in VARIANTS:
            split.statements.clear()
            turns = args.threads * max(1, args.turns // args.threads)
            one_run(split, variant, args, None)
            print(f"statements per turn, memory {variant} (traced run):")
            for (name, kind), count in sorted(split.statements.items()):
                if count / turns >= 0.01:
                    print(f"  {name:30} {kind:10} {count / turns:8.2f}")
        split.trace = False
    print(json.dumps(result))


if __name__ == "__main__":
    main()
