#!/usr/bin/env python3
"""The cost of typed answers per turn: agent turns with and without an output schema,
measured in the same run.

The workload is ``bench/agent_turns.py``'s (the runtime as ``toolang init`` composes
it, every installed plugin, memory off; an instant scripted model; one ``add`` tool call
per turn), except that the model's final answer is JSON (``{"sum": N}``) in every
variant, so the variants differ only in what the runtime does with it:

- ``no_schema``: the agent has no ``output_schema``: the answer is stored as text;
- ``schema``: the agent's AGENT.md has ``output_schema:``: the answer is parsed and
  validated (fastjsonschema, compiled once), an ``output_check`` step is stored, the
  schema goes with every model call and into the prompt;
- ``schema_retry`` (for scale): the first answer is not JSON, so it is sent back once:
  one more model call and a stored rejected check per turn.

Each repeat runs the variants one after another; the figure is CPU time per turn (the
process's, less a start and a stop's), and the overhead of ``schema`` against
``no_schema`` in the same repeat. A micro figure times the check alone.

    python3 bench/output_validation.py [--turns 2000] [--threads 200] [--repeat 3]

The last line is a JSON object with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import agent_turns
from _common import burst, started
from agent_turns import Workload, build_runtime

from toolang_core.logs import configure_logging
from toolang_core.models.types import ModelRequest, ModelResponse
from toolang_core.store.types import TurnFilter, TurnStatus
from toolang_core.turn.output import RETRY_PREFIX, OutputChecker, OutputSpec

PLAIN_ADDER = agent_turns.ADDER
SCHEMA = {
    "type": "object",
    "properties": {"sum": {"type": "integer"}},
    "required": ["sum"],
    "additionalProperties": False,
}
TYPED_ADDER = PLAIN_ADDER.replace(
    "prefixes: [add]\n", f"prefixes: [add]\noutput_schema: {json.dumps(SCHEMA)}\n"
)
VARIANTS = ("no_schema", "schema", "schema_retry")


class JsonWorkload(Workload):
    """The adder, answering ``{"sum": N}`` (with ``retry``, first a text that is no JSON)."""

    def __init__(self, *, retry: bool) -> None:
        super().__init__()
        self.retry = retry

    def complete(self, request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if last.role == "user" and last.content.startswith(RETRY_PREFIX):
            self.model_calls += 1
            result = json.loads(request.messages[-3].content)
            return ModelResponse(text=json.dumps({"sum": result["output"]}), model="scripted")
        if last.role == "tool" and self.retry:
            self.model_calls += 1
            return ModelResponse(text="the sum is in the tool's result", model="scripted")
        if last.role == "tool":
            self.model_calls += 1
            result = json.loads(last.content)
            return ModelResponse(text=json.dumps({"sum": result["output"]}), model="scripted")
        return super().complete(request)


def cycle(home: Path, variant: str, turns: int, threads: int) -> dict[str, Any]:
    adder = PLAIN_ADDER if variant == "no_schema" else TYPED_ADDER
    workload = JsonWorkload(retry=variant == "schema_retry")
    runtime, _ = build_runtime(home, memory=False, workload=workload, adder=adder)
    inbox = runtime.open_inbox()
    expected: dict[str, int] = {}

    async def run() -> float:
        stop = asyncio.Event()
        serving = await started(runtime, stop)

        def expect(turn_id: str, a: int, b: int) -> None:
            expected[turn_id] = a + b

        rate = await burst(inbox, workload, turns, threads, expect)
        stop.set()
        await serving
        return rate

    cpu = time.process_time()
    rate = asyncio.run(run())
    cpu = time.process_time() - cpu
    wrong = [t for t, n in expected.items() if json.loads(workload.answers[t]) != {"sum": n}]
    assert not wrong, f"{len(wrong)} wrong answers, e.g. {wrong[:3]}"
    calls_per_turn = 3 if variant == "schema_retry" else 2
    assert workload.model_calls == calls_per_turn * turns, (workload.model_calls, turns)
    store = inbox.store
    finished = store.list_turns(TurnFilter(limit=turns + 1))
    assert len(finished) == turns
    assert all(t.status is TurnStatus.COMPLETED for t in finished)
    for turn in finished[:: max(1, turns // 20)]:
        checks = [s for s in store.steps(turn.id) if s.kind == "output_check"]
        assert len(checks) == {"no_schema": 0, "schema": 1, "schema_retry": 2}[variant], checks
    store.close()
    return {"turns_per_s": rate, "cpu_s": cpu}


def check_alone() -> float:
    """Microseconds per :meth:`OutputChecker.check` of a valid answer (parse + validate)."""
    checker = OutputChecker()
    spec = OutputSpec(SCHEMA, 2, "bench")
    checker.check(spec, '{"sum": 3}')  # compiled once, as in a runtime
    runs = 20_000
    seconds = timeit.timeit(lambda: checker.check(spec, '{"sum": 3}'), number=runs)
    return 1e6 * seconds / runs


def main() -> None:
    configure_logging(level="error")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cpu: dict[str, list[float]] = {v: [] for v in VARIANTS}
    rate: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for n in range(args.repeat):
        for variant in VARIANTS:
            with tempfile.TemporaryDirectory() as tmp:
                figures = cycle(Path(tmp), variant, args.turns, args.threads)
            with tempfile.TemporaryDirectory() as tmp:  # a start and a stop's CPU, no turns
                fixed = cycle(Path(tmp), variant, 0, 1)
            per_turn = 1000 * (figures["cpu_s"] - fixed["cpu_s"]) / args.turns
            cpu[variant].append(per_turn)
            rate[variant].append(figures["turns_per_s"])
            print(
                f"run {n + 1} {variant:12}: {figures['turns_per_s']:7.0f} turns/s   "
                f"{per_turn:.3f} ms CPU/turn"
            )
    paired = [s / p - 1 for s, p in zip(cpu["schema"], cpu["no_schema"], strict=True)]
    added = [s - p for s, p in zip(cpu["schema"], cpu["no_schema"], strict=True)]
    micro = check_alone()
    result = {
        "turns": args.turns,
        "repeat": args.repeat,
        "cpu_ms_per_turn_median": {v: round(statistics.median(c), 4) for v, c in cpu.items()},
        "turns_per_s_median": {v: round(statistics.median(r)) for v, r in rate.items()},
        "schema_cpu_overhead_median": round(statistics.median(paired), 4),
        "schema_cpu_us_per_turn_median": round(1000 * statistics.median(added), 1),
        "check_alone_us": round(micro, 2),
    }
    print(
        f"median: a schema adds {result['schema_cpu_us_per_turn_median']} µs CPU per turn "
        f"({result['schema_cpu_overhead_median']:+.1%} against no schema, each repeat's "
        f"pair); the check alone {micro:.1f} µs"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
