#!/usr/bin/env python3
"""Instructions per durable agent turn, counted by valgrind's callgrind.

The workload is ``bench/agent_turns.py``'s (the starter's plugins, an agent calling
one tool per turn, a scripted model; memory on, or off with ``--memory off``), served
by a real runtime on a real SQLite store. A warm-up of ``--warmup`` turns runs with
instrumentation off; then ``--turns`` turns over ``--threads`` threads are counted,
from the first submit to the last answer delivered. Unlike its turns per second, the
instructions a turn takes do not move with the machine's load (to a percent or so: a
poll that waits runs a little more when the machine is slow), so it compares two trees
on a shared machine::

    python3 bench/agent_turn_instructions.py [--turns 300] [--memory on|off] [--tree DIR]

``--tree``: the checkout whose ``bench/agent_turns.py`` and code are measured, run with
that checkout's interpreter (``cd OTHER && .venv/bin/python /path/to/this --tree .``).
Needs ``valgrind``. The last line is a JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from tool_chain_instructions import _wait_for, callgrind_count  # noqa: E402


def target(args: argparse.Namespace) -> None:
    """Under callgrind: serve, warm up, write ``ready``, wait for ``go``, run the
    counted turns, write ``done``, wait for ``end``, stop."""
    signals, tree, threads = args.target, args.tree.resolve(), args.threads
    sys.path.insert(0, str(tree / "bench"))
    sys.path.insert(0, str(tree))
    import agent_turns as at

    from toolang_core.logs import configure_logging
    from toolang_core.store.types import NewTurnRequest

    configure_logging(level="warning")
    with tempfile.TemporaryDirectory() as tmp:
        runtime, workload = at.build_runtime(Path(tmp), memory=args.memory == "on")
        inbox = runtime.open_inbox()

        async def submit_all(first: int, count: int) -> None:
            goal = len(workload.answers) + count
            for i in range(first, first + count):
                thread = f"chat:{i % threads}"
                inbox.submit(NewTurnRequest(source="chat", thread_id=thread, input=f"add {i} 1"))
                if i % 25 == 24:  # let the runtime work while turns are submitted
                    await asyncio.sleep(0)
            while len(workload.answers) < goal:
                await asyncio.sleep(0.002)

        async def run() -> None:
            stop = asyncio.Event()
            serving = asyncio.create_task(runtime.serve(stop, sources=()))
            while not runtime.admitting:
                await asyncio.sleep(0.001)
            await submit_all(0, args.warmup)
            gc.collect()
            (signals / "ready").write_text(str(os.getpid()))
            _wait_for(signals / "go")
            await submit_all(args.warmup, args.turns)
            (signals / "done").write_text("")
            _wait_for(signals / "end")
            stop.set()
            await serving

        asyncio.run(run())
        wrong = [t for t, answer in workload.answers.items() if not answer.startswith("the sum")]
        assert not wrong, f"{len(wrong)} wrong answers, e.g. {wrong[:3]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--threads", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--memory", choices=("on", "off"), default="on")
    parser.add_argument("--tree", type=Path, default=HERE.parent)
    parser.add_argument("--target", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    tree = args.tree.resolve()
    if args.target is not None:
        target(args)
        return
    passed = ["--turns", str(args.turns), "--threads", str(args.threads)]
    passed += ["--warmup", str(args.warmup), "--memory", args.memory, "--tree", str(tree)]
    per_turn = callgrind_count(Path(__file__), passed, args.turns)
    print(f"memory {args.memory}: {per_turn} instructions per turn ({args.turns} turns)")
    figures = {"memory": args.memory, "turns": args.turns, "instructions_per_turn": per_turn}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
