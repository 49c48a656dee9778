#!/usr/bin/env python3
"""Per-call overhead of the tool-hook chain, next to a direct function call (same run).

Three ways to run the same small tool (``echo_len``: returns a string and its length as
a small JSON object, the shape most tools answer with):

direct
    ``tool.function(**params)`` — the floor.
bare chain
    ``ToolChain.run`` with no stage plugin installed: lookup, scope, parameter
    validation, the (empty) hook calls and the stage records.
full chain
    ``ToolChain.run`` with every plugin installed in this environment loaded through
    entry points (the five stage plugins: SecurityFilter, ApprovalGate,
    LearningObserver, KnowledgeSaver, EventPublisher) and their default settings, on a
    real SQLite store — what every tool call of a real turn pays.

Each figure is the median over ``--batches`` batches of ``--calls`` calls (µs per call).
The overhead is ``full chain - direct``. Goal: < 50 µs per tool call.

    python3 bench/tool_chain.py [--calls 2000] [--batches 15]

The last line is a JSON object with the figures.

On a shared, loaded machine these wall figures move by 10-20 % from run to run; the
instructions a tool call executes do not. ``bench/tool_chain_instructions.py`` counts
them under valgrind's callgrind (the same chain, only the measured calls counted): use
it to compare two trees for a change to the chain's cost, and quote the wall figures
of alternate runs (before, after, three each, ``chrt -f 10``) beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolang_core import Tool, ToolCall, ToolCallContext, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.logs import configure_logging
from toolang_core.redaction import use_policy
from toolang_core.runtime import Runtime
from toolang_core.tools.chain import ToolChain


def echo_len(text: str) -> dict[str, object]:
    """The length of ``text``.

    :param text: any text
    """
    return {"text": text, "length": len(text)}


class BenchTools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        register(Tool.from_function(echo_len, blocking=False))


def build(home: Path, *, stages: bool) -> tuple[Runtime, ToolChain]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    if not stages:
        env["TOOLANG_LOAD_PLUGINS"] = ""
    config = ToolangConfig(base_dir=home, home=home / ".toolang")
    runtime = Runtime.from_config(config, env=env, builtins=None)
    runtime.host.register(BenchTools(), "bench-tools")
    runtime.store = runtime.open_store()
    runtime.run_id = "bench-run"
    # As in `Runtime.serve`: the hooks a plugin declares inactive for this run (e.g.
    # the server's event listener when no server runs) are not called. (Older trees,
    # measured with --tree, have no such declaration.)
    leave_out = getattr(runtime.host.hooks, "leave_out_inactive", None)
    if leave_out is not None:
        leave_out(runtime)
    chain = ToolChain(
        runtime.host.hooks, runtime.host.components.tools, redaction=runtime.redaction
    )
    return runtime, chain


async def never_asked(*_):
    raise AssertionError("the bench tool needs no approval")


async def time_chain(runtime: Runtime, chain: ToolChain, calls: int) -> float:
    # As in `Runtime.serve`: the runtime's redaction policy (its SecurityFilter's
    # detectors) is the one in effect for what its plugins mask.
    undo = use_policy(runtime.redaction)
    try:
        return await _time_chain(runtime, chain, calls)
    finally:
        undo()


async def _time_chain(runtime: Runtime, chain: ToolChain, calls: int) -> float:
    started = time.perf_counter()
    for i in range(calls):
        call = ToolCall(call_id=f"c{i}", name="echo_len", params={"text": "hello world"})
        ctx = ToolCallContext(
            call=call,
            turn_id="bench-turn",
            thread_id="bench:thread",
            run_id="bench-run",
            agent="assistant",
            runtime=runtime,
        )
        done = await chain.run(call, ctx, wait_for_approval=never_asked)
        assert done.result.ok, done.result.error
    return (time.perf_counter() - started) / calls * 1e6


def time_direct(calls: int) -> float:
    params = {"text": "hello world"}
    started = time.perf_counter()
    for _ in range(calls):
        echo_len(**params)
    return (time.perf_counter() - started) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--batches", type=int, default=15)
    args = parser.parse_args()
    configure_logging(level="warning")

    with tempfile.TemporaryDirectory() as tmp:
        bare_rt, bare = build(Path(tmp) / "bare", stages=False)
        full_rt, full = build(Path(tmp) / "full", stages=True)
        stage_plugins = {
            stage: impls for stage, _hook, impls in full_rt.host.hooks.chain() if impls
        }

        async def measure() -> tuple[list[float], list[float], list[float]]:
            await full_rt.host.hooks.startup(full_rt)
            await time_chain(full_rt, full, 200)  # warm caches, open plugin databases
            await time_chain(bare_rt, bare, 200)
            gc.collect()  # as `toolang run` does once start-up is done (freeze_heap)
            gc.freeze()
            d, b, f = [], [], []
            for _ in range(args.batches):
                d.append(time_direct(args.calls))
                b.append(await time_chain(bare_rt, bare, args.calls))
                f.append(await time_chain(full_rt, full, args.calls))
            await full_rt.host.hooks.shutdown(full_rt, "stop")
            return d, b, f

        direct, bare_us, full_us = asyncio.run(measure())
        for runtime in (bare_rt, full_rt):
            runtime.close_plugin_databases()
            assert runtime.store is not None
            runtime.store.close()

    figures = {
        "calls_per_batch": args.calls,
        "batches": args.batches,
        "direct_us": round(statistics.median(direct), 3),
        "bare_chain_us": round(statistics.median(bare_us), 2),
        "full_chain_us": round(statistics.median(full_us), 2),
        "stage_plugins": stage_plugins,
    }
    figures["overhead_us"] = round(figures["full_chain_us"] - figures["direct_us"], 2)
    figures["goal_us"] = 50
    figures["meets_goal"] = figures["overhead_us"] < 50
    print(f"direct call         {figures['direct_us']:8.3f} µs")
    print(f"chain, no plugins   {figures['bare_chain_us']:8.2f} µs")
    print(f"chain, all stages   {figures['full_chain_us']:8.2f} µs  {stage_plugins}")
    print(f"overhead per call   {figures['overhead_us']:8.2f} µs (goal < 50)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
