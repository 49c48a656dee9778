#!/usr/bin/env python3
"""The cost of the tool-call chain with the LearningObserver and KnowledgeSaver plugins.

One trivial in-line tool runs through the real chain (``ToolChain.run``: validate →
SecurityFilter → ApprovalGate → execute → result filters → LearningObserver →
KnowledgeSaver → EventPublisher) of a real runtime, many times in a row:

    bare              no post-execution plugin (the raw cost of the chain)
    naive-insert      an observer doing one plain INSERT per call (what batching avoids)
    learning          toolang-hook-learning-observer (batched writes)
    both-skip         both plugins; the knowledge saver's rules keep nothing (the usual case)
    both-keep         both plugins; every result is long and new, so every one is kept

Each run includes the final flush (what shutdown writes). Rounds are interleaved and
the median per-call time of the rounds is reported, with the ratio to ``bare``.

    python3 bench/chain_observers.py [--calls 5000] [--rounds 5]

Goal: the whole chain with both plugins under 50 µs per call in the usual case
(``both-skip``). ``both-keep`` is printed beside it with the share of masking the kept
text (``toolang_core.redact_text``, whose cost grows with the text). The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlite_utils import Migrations

import toolang_hook_knowledge_saver as knowledge_saver
import toolang_hook_learning_observer as learning_observer
from toolang_core import Tool, ToolCall, ToolCallContext, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.runtime import Runtime
from toolang_core.tools.chain import ToolChain

GOAL_US = 50.0
COUNTER = itertools.count()


def short(text: str) -> str:
    """Return ``text`` (too short for the knowledge saver)."""
    return text


def report(text: str) -> str:
    """A long, new text on every call (the knowledge saver keeps each)."""
    return f"report {next(COUNTER)}: {text * 20}"


class Tools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        register(Tool.from_function(short, blocking=False))
        register(Tool.from_function(report, blocking=False))


NAIVE = Migrations("naive-insert")


@NAIVE()
def m001(db):
    db.execute(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, at REAL, agent TEXT, tool TEXT, ok INT, "
        "error_type TEXT, error TEXT, duration_ms REAL, turn_id TEXT, thread_id TEXT, "
        "call_id TEXT)"
    )
    db.execute("CREATE INDEX t_agent_tool_at ON t (agent, tool, at)")
    db.execute("CREATE INDEX t_at ON t (at)")


class NaiveObserver:
    @staticmethod
    @hookimpl
    def toolang_observe_tool_result(call, result, ctx):
        db = ctx.runtime.plugin_database("naive-insert", NAIVE)
        db.conn.execute(
            "INSERT INTO t (at, agent, tool, ok, error_type, error, duration_ms, turn_id, "
            "thread_id, call_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                time.time(),
                ctx.agent,
                call.name,
                int(result.ok),
                result.error_type,
                result.error,
                result.duration_ms,
                ctx.turn_id,
                ctx.thread_id,
                call.call_id,
            ),
        )


SETUPS = {
    "bare": ([], "short"),
    "naive-insert": ([("naive-insert", NaiveObserver())], "short"),
    "learning": ([("hook-learning-observer", learning_observer)], "short"),
    "both-skip": (
        [
            ("hook-learning-observer", learning_observer),
            ("hook-knowledge-saver", knowledge_saver),
        ],
        "short",
    ),
    "both-keep": (
        [
            ("hook-learning-observer", learning_observer),
            ("hook-knowledge-saver", knowledge_saver),
        ],
        "report",
    ),
}


def per_call_us(name: str, calls: int) -> float:
    plugins, tool = SETUPS[name]
    home = Path(tempfile.mkdtemp(prefix="toolang-bench-"))
    config = ToolangConfig(base_dir=home, home=home / ".toolang")
    runtime = Runtime.with_plugins(config, [("tools", Tools()), *plugins], env={})
    chain = ToolChain(runtime.host.hooks, runtime.host.components.tools)

    async def no_approvals(*_):
        raise AssertionError("no gate is installed")

    async def run() -> float:
        for i in range(200):  # warm up: open databases, fill caches
            call = ToolCall(f"w{i}", tool, {"text": "warm up, warm up"})
            ctx = ToolCallContext(call, "turn", "bench:t", "run", "assistant", runtime=runtime)
            await chain.run(call, ctx, wait_for_approval=no_approvals)
        await runtime.host.hooks.shutdown(runtime)
        prepared = [ToolCall(f"c{i}", tool, {"text": "the quick brown fox"}) for i in range(calls)]
        contexts = [
            ToolCallContext(c, "turn", "bench:t", "run", "assistant", runtime=runtime)
            for c in prepared
        ]
        started = time.perf_counter()
        for call, ctx in zip(prepared, contexts, strict=True):
            chained = await chain.run(call, ctx, wait_for_approval=no_approvals)
            assert chained.result.ok, chained.result.error
        await runtime.host.hooks.shutdown(runtime)  # the last batch is part of the cost
        return (time.perf_counter() - started) / calls * 1e6

    try:
        return asyncio.run(run())
    finally:
        runtime.close_plugin_databases()


def mask_us(repeat: int = 2_000) -> float:
    """What ``redact_text`` alone costs on one text of the ``both-keep`` setup."""
    from toolang_core import redact_text

    sample = report("the quick brown fox")
    started = time.perf_counter()
    for _ in range(repeat):
        redact_text(sample)
    return (time.perf_counter() - started) / repeat * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    samples: dict[str, list[float]] = {name: [] for name in SETUPS}
    for _ in range(args.rounds):
        for name in SETUPS:
            samples[name].append(per_call_us(name, args.calls))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    bare = medians["bare"]
    print(f"{'setup':14} {'µs/call':>9} {'vs bare':>8}   rounds")
    for name, value in medians.items():
        rounds = " ".join(f"{v:.1f}" for v in samples[name])
        print(f"{name:14} {value:9.1f} {value / bare:7.2f}x   {rounds}")
    usual = medians["both-skip"]
    masking = mask_us()
    print(f"goal: whole chain with both plugins < {GOAL_US:g} µs/call → {usual:.1f} µs")
    print(
        f"every result kept: {medians['both-keep']:.1f} µs/call, of which masking the "
        f"{len(report('the quick brown fox'))}-character text (toolang_core.redact_text) "
        f"takes {masking:.1f} µs"
    )
    print(
        json.dumps(
            {
                "bench": "chain_observers",
                "calls": args.calls,
                "rounds": args.rounds,
                "us_per_call": {k: round(v, 2) for k, v in medians.items()},
                "ratio_to_bare": {k: round(v / bare, 2) for k, v in medians.items()},
                "redact_text_us": round(masking, 2),
                "goal_us": GOAL_US,
                "goal_met": usual < GOAL_US,
            }
        )
    )


if __name__ == "__main__":
    main()
