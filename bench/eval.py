#!/usr/bin/env python3
"""Eval cases per second: ``--cases`` written cases through ``toolang eval``'s path.

The runtime is composed as ``toolang init`` composes it (every installed plugin through
its entry point, the starter ``toolang.toml``, memory on) with an instant scripted
model at the model boundary. One repeat: read a JSONL dataset of ``--cases`` cases
(each judged by ``exact``, ``contains``, ``latency`` and ``tokens``; every fifth also by
``tool_call`` — its input asks for the ``add`` tool), run them all in an isolated home
(``--concurrency`` at once) and score them, then store the run as a record — what
``toolang eval DATASET`` does after its start-up. The figure is cases / (dataset read →
run stored). Every case must pass.

    python3 bench/eval.py [--cases 1000] [--concurrency 16] [--repeat 3]

Goal (#39): >= 300 cases/s with a scripted model. The last line is a JSON object with
the figures (the median of the repeats).

Beside it, in the same repeat, the same runtime's plain agent turns: every case's input
submitted as a chat turn on a thread of its own to a serving runtime (no eval: no
dataset, no isolated home, no scoring) — turns / (first submit → last answer). The
ratio of the two is what an eval costs over the turns it runs. Then those turns replayed
(the eval's replay mode for recorded turns, tool calls answered from the record): the
replay overhead per turn is 1/replayed - 1/live, in µs (negative: a replay is cheaper,
its tools do not run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ScriptedWorkload, burst, compose, starter_text

from toolang_core import RegisterTool, Tool, hookimpl
from toolang_core.evals.dataset import load_dataset
from toolang_core.evals.registry import collect_evaluators
from toolang_core.evals.results import save_run
from toolang_core.evals.runner import EvalOptions
from toolang_core.evals.session import build_cases, evaluate
from toolang_core.logs import configure_logging
from toolang_core.models.types import ModelRequest, ModelResponse
from toolang_core.tools.types import ToolCall

SETTINGS = """
[models]
default = "scripted"

[runtime]
sources = []
shutdown_grace_seconds = 0
"""
USAGE = {"input_tokens": 120, "output_tokens": 8}


class Workload(ScriptedWorkload):
    """The ``add`` tool and an instant model: ``add A B`` calls the tool, anything else
    is echoed."""

    @staticmethod
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @hookimpl
    def toolang_register_tools(self, register: RegisterTool) -> None:
        register(Tool.from_function(self.add, blocking=False, owner="assistant"))

    def complete(self, request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if last.role == "tool":
            return ModelResponse(text=f"sum {json.loads(last.content)['output']}", usage=USAGE)
        if last.content.startswith("add "):
            a, b = (int(w) for w in last.content.split()[1:3])
            return ModelResponse(tool_calls=(ToolCall("c1", "add", {"a": a, "b": b}),), usage=USAGE)
        return ModelResponse(text=f"echo {last.content}", usage=USAGE)


def dataset(path: Path, cases: int) -> None:
    budget = [{"latency": 30}, {"tokens": 1000}]
    with path.open("w") as f:
        for i in range(cases):
            if i % 5 == 0:
                case: dict[str, Any] = {
                    "id": f"c{i}",
                    "input": f"add {i} 1",
                    "expected": f"sum {i + 1}",
                    "evaluators": [
                        "exact",
                        {"contains": "sum"},
                        {"tool_call": {"name": "add", "params": {"a": i, "b": 1}}},
                        *budget,
                    ],
                }
            else:
                case = {
                    "id": f"c{i}",
                    "input": f"case {i}",
                    "expected": f"echo case {i}",
                    "evaluators": ["exact", {"contains": f"{i}"}, *budget],
                }
            f.write(json.dumps(case) + "\n")


def plain_turns(cases: int) -> tuple[float, float]:
    """Agent turns/s of the same runtime: ``cases`` turns, each on its own thread, each
    calling the ``add`` tool; then turns/s of replaying every one of them
    (:func:`toolang_core.plan_replay` / ``submit_replay`` without history: the eval's
    replay mode — the model asked again, each tool call answered from the record)."""
    from toolang_core import plan_replay, submit_replay

    with tempfile.TemporaryDirectory(prefix="toolang-bench-turns-") as tmp:
        workload = Workload()
        runtime = compose(Path(tmp), starter_text() + SETTINGS, workload)
        inbox = runtime.open_inbox()
        recorded: list[str] = []

        async def run() -> tuple[float, float]:
            stop = asyncio.Event()
            # doors closed, as in the eval (one_shot): no server, no listener
            serving = asyncio.create_task(runtime.serve(stop, sources=(), one_shot=True))
            while not runtime.admitting:
                await asyncio.sleep(0.001)
            rate = await burst(inbox, workload, cases, cases, lambda i, *_: recorded.append(i))
            plans = [plan_replay(inbox.store, turn_id, owner=None) for turn_id in recorded]
            workload.delivered_at.clear()
            start = time.perf_counter()
            for n, plan in enumerate(plans):
                submit_replay(inbox, plan, history=False)
                if n % 25 == 24:
                    await asyncio.sleep(0)
            while len(workload.answers) < 2 * cases:
                await asyncio.sleep(0.002)
            replayed = cases / (max(workload.delivered_at.values()) - start)
            stop.set()
            await serving
            return rate, replayed

        try:
            return asyncio.run(run())
        finally:
            inbox.store.close()


def one_repeat(cases: int, concurrency: int | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="toolang-bench-eval-") as tmp:
        home = Path(tmp)
        text = starter_text() + SETTINGS
        runtime = compose(home, text, Workload())
        path = home / "cases.jsonl"
        dataset(path, cases)
        start = time.perf_counter()
        registry = collect_evaluators(runtime.hooks)
        loaded = build_cases(load_dataset(path, registry), [], registry)
        read = time.perf_counter()
        done = asyncio.run(
            evaluate(
                runtime.config,
                runtime.host,
                loaded,
                EvalOptions(concurrency=concurrency),
                env={},
                home=home / "eval",
            )
        )
        ran = time.perf_counter()
        store = runtime.open_store()
        try:
            save_run(store, done, runtime.redaction)
        finally:
            store.close()
        end = time.perf_counter()
    summary = done.summary()
    if summary["passed"] != cases:
        failed = [c.to_json() for c in done.cases if not c.passed][:3]
        raise SystemExit(f"{cases - summary['passed']} case(s) failed: {failed}")
    return {
        "cases_per_second": cases / (end - start),
        "read_seconds": read - start,
        "run_and_score_seconds": ran - read,
        "store_seconds": end - ran,
        **dict(
            zip(
                ("plain_turns_per_second", "replay_turns_per_second"),
                plain_turns(cases),
                strict=True,
            )
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument(
        "--concurrency", type=int, default=None, help="default: [scheduler] max_running"
    )
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    configure_logging(level="warning", fmt="console")
    repeats = []
    for n in range(args.repeat):
        figures = one_repeat(args.cases, args.concurrency)
        repeats.append(figures)
        print(
            f"repeat {n + 1}: {figures['cases_per_second']:.0f} cases/s "
            f"(read {figures['read_seconds'] * 1000:.0f} ms, run+score "
            f"{figures['run_and_score_seconds'] * 1000:.0f} ms, store "
            f"{figures['store_seconds'] * 1000:.0f} ms); plain agent turns "
            f"{figures['plain_turns_per_second']:.0f} turns/s, replayed "
            f"{figures['replay_turns_per_second']:.0f} turns/s"
        )
    median = statistics.median(r["cases_per_second"] for r in repeats)
    plain = statistics.median(r["plain_turns_per_second"] for r in repeats)
    replayed = statistics.median(r["replay_turns_per_second"] for r in repeats)
    overhead_us = (1 / replayed - 1 / plain) * 1e6
    print(
        f"median {median:.0f} cases/s over {args.repeat} repeats (goal >= 300); plain agent "
        f"turns {plain:.0f} turns/s; eval / plain = {median / plain:.2f}; replayed "
        f"{replayed:.0f} turns/s, replay overhead per turn {overhead_us:+.0f} µs vs a live turn"
    )
    print(
        json.dumps(
            {
                "cases": args.cases,
                "concurrency": args.concurrency,
                "median_cases_per_second": round(median, 1),
                "median_plain_turns_per_second": round(plain, 1),
                "ratio": round(median / plain, 3),
                "median_replay_turns_per_second": round(replayed, 1),
                "replay_overhead_us_per_turn": round(overhead_us, 1),
                "repeats": [round(r["cases_per_second"], 1) for r in repeats],
            }
        )
    )


if __name__ == "__main__":
    main()
