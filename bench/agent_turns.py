#!/usr/bin/env python3
"""Durable agent turns per second with a tool call, next to the echo engine (same run).

The workload: ``--turns`` chat turns over ``--threads`` threads (each thread's turns in
order, all threads at once), each an agent turn with the runtime composed as
``toolang init`` composes it — every installed plugin loaded through its entry point, the
starter ``toolang.toml`` (all five tool-hook plugins; memory on, or off for the second
variant). The model is an instant scripted function at the model boundary: a user
message asks for one call of the ``add`` tool, the tool's result gets the final answer.
Answers come back in-process through ``toolang_deliver_turn``. The figure is
turns / (first submit → last answer delivered).

Every answer is checked, and so are the counts (model calls = 2 x turns, tool calls =
turns) and the store (every turn completed, with its steps). A one-at-a-time probe then
runs ``--probe`` turns one after another on one thread (submit → answer delivered).
The echo figure is ``bench/throughput.py``'s toolang side on the same machine, in the
same run: the engine with no agent loop.

Two shapes of the same work (``--shape``, both by default): ``burst`` submits every
turn at once; ``ordered`` runs ``--threads`` conversations of ``--turns // --threads``
turns, each thread's next turn submitted when its previous answer is delivered (one in
flight per thread: how chat users and A2A/MCP callers send). Each repeat also runs the
reference recorder (``bench/reference.py``: the request, the tool call's intent, its
result and the finish in plain sqlite3 — 4 commits a turn, WAL, ``synchronous`` as the
store's) on the ordered workload, and prints each variant's ratio to it, memory on
against off (each repeat's pair), and the process's CPU time per turn from first submit
to last answer (every thread: the memory plugin's database thread too).
``--null-memory`` adds memory on with a plugin that recalls and stores nothing: what
the runtime's side of memory costs, apart from the plugin's work.

    python3 bench/agent_turns.py [--turns 2000] [--threads 200] [--probe 50] [--repeat 3]
        [--shape burst|ordered|both] [--null-memory] [--running N]

Goals (#18): >= 1,100 turns/s with memory on, >= 2,000 with memory off. Goals (#38):
ordered, memory on >= 0.35 x the reference recorder and memory off >= 0.6 x; memory on
>= 0.75 x memory off on both shapes; one-at-a-time p50 < 1.0 ms with memory on. The
last line is a JSON object with the figures.

``--running N``: ``N`` chat turns running at once instead of the starter's (its
``[scheduler]`` ``max_running = 8`` and its chat group's ``max_running = 4``). A turn
with memory on waits for the memory plugin's thread for its recall while it holds its
slot (its write comes after the commit that frees the slot). More turns running put
more recalls and writes in each of the plugin's groups, and more finished turns in each
of the store's commits: less CPU per turn.

``--usage``: the model reports token usage on every answer, as a provider would (what
recording and summing it costs a turn; docs/spend-limits.md).

``--otel`` instead runs the memory-on workload with toolang-otel off (``[plugins]
disable``) and on (``exporter = "otlp"`` to a collector stand-in in another process,
default sampling), interleaved, and reports each one's CPU time per turn (the
process's, every thread) and the overhead of on against off in the same repeat (#24:
goal < 10 %).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ScriptedWorkload, burst, compose, memory_off, ordered, started, starter_text
from reference import reference_cycle
from throughput import toolang_cycle

from toolang_core import RegisterTool, Tool, hookimpl
from toolang_core.logs import configure_logging
from toolang_core.memory import (
    MemoryForget,
    MemoryForgetResult,
    MemoryHealth,
    MemoryItem,
    MemoryListRequest,
    MemoryRecallRequest,
    MemoryRecallResult,
    MemoryWriteBatch,
    MemoryWriteResult,
)
from toolang_core.models.types import ModelRequest, ModelResponse
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnFilter, TurnStatus
from toolang_core.tools.types import ToolCall

ADDER = """\
---
name: adder
description: Adds two numbers with the add tool.
prefixes: [add]
---
Add the numbers you are given with the add tool and say the sum.
"""

BENCH_SETTINGS = """
[agents]
default = "adder"
dir = "agents"

[models]
default = "scripted"

[runtime]
sources = []
shutdown_grace_seconds = 0
"""


USAGE = {"input_tokens": 120, "output_tokens": 8}
"""What every answer reports with ``--usage`` (as a provider would)."""
REPORT_USAGE = "--usage" in sys.argv


class NullMemory:
    """``--null-memory``: a memory plugin that recalls nothing and stores nothing, at
    once — what the runtime's side of memory costs a turn, without the plugin's work."""

    PROVIDER = "bench-null"

    async def recall(self, request: MemoryRecallRequest) -> MemoryRecallResult:
        return MemoryRecallResult(items=(), provider=self.PROVIDER)

    async def remember(self, batch: MemoryWriteBatch) -> MemoryWriteResult:
        return MemoryWriteResult(written=len(batch.entries), provider=self.PROVIDER)

    def forget(self, request: MemoryForget) -> MemoryForgetResult:
        return MemoryForgetResult(forgotten=0, provider=self.PROVIDER)

    def list_entries(self, request: MemoryListRequest) -> tuple[MemoryItem, ...]:
        return ()

    def health(self) -> MemoryHealth:
        return MemoryHealth(status="ok", provider=self.PROVIDER)

    def close(self) -> None:
        pass


class Workload(ScriptedWorkload):
    """The bench's plugin: the ``add`` tool, the scripted model and the delivery hook."""

    def __init__(self) -> None:
        super().__init__()
        self.usage: dict[str, int] = dict(USAGE) if REPORT_USAGE else {}
        self.model_calls = 0
        self.tool_calls = 0

    # -- the tool ----------------------------------------------------------------------

    def add(self, a: int, b: int) -> int:
        """Add two integers."""
        self.tool_calls += 1
        return a + b

    @hookimpl
    def toolang_register_tools(self, register: RegisterTool) -> None:
        register(Tool.from_function(self.add, blocking=False))

    @hookimpl
    def toolang_register_memory(self, register: Any) -> None:
        register(NullMemory.PROVIDER, lambda context: NullMemory(), description="the bench's")

    # -- the model (registered and delivered to by ScriptedWorkload) --------------------

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.model_calls += 1
        last = request.messages[-1]
        if last.role == "tool":
            result = json.loads(last.content)
            text = f"the sum is {result['output']}"
            return ModelResponse(text=text, model="scripted", usage=self.usage)
        a, b = (int(word) for word in last.content.split()[-2:])
        call = ToolCall("c1", "add", {"a": a, "b": b})
        return ModelResponse(tool_calls=(call,), usage=self.usage)


def build_runtime(
    home: Path,
    *,
    memory: bool,
    otel: str | None = None,
    workload: Workload | None = None,
    adder: str = ADDER,
    null_memory: bool = False,
    running: int | None = None,
) -> tuple[Runtime, Workload]:
    """``null_memory``: memory on with :class:`NullMemory` as the plugin. ``running``:
    chat turns running at once (the starter's ``[scheduler]`` and chat group
    ``max_running``; ``None`` keeps the starter's). ``otel``:
    ``None`` as installed (the starter's settings), ``"off"`` disabled, else
    the OTLP endpoint to export to. ``workload`` (a new :class:`Workload` by default)
    is the bench plugin; ``adder`` the agent's AGENT.md."""

    def edit(text: str) -> str:
        if running is not None:
            text = with_running(text, running)
        if otel == "off":
            text = text.replace("disable = []", 'disable = ["otel"]', 1)
        elif otel is not None:
            text += f'\n[plugins.otel]\nexporter = "otlp"\nendpoint = "{otel}"\n'
        if null_memory:
            return text.replace('[memory]\nplugin = "sqlite"', '[memory]\nplugin = "bench-null"')
        return text if memory else memory_off(text)

    # the bench's own sections replace the starter's (starter_text drops them)
    (home / "agents" / "adder").mkdir(parents=True)
    (home / "agents" / "adder" / "AGENT.md").write_text(adder)
    made = workload if workload is not None else Workload()
    return compose(home, starter_text(edit) + BENCH_SETTINGS, made), made


def with_running(text: str, running: int) -> str:
    """The starter's ``text`` with ``running`` turns at once: the ``[scheduler]`` bound
    and the chat group's (the bench's turns are chat turns)."""
    made = []
    section = ""
    for line in text.splitlines():
        if line.startswith("["):
            section = line.strip()
        bound = section in ("[scheduler]", "[scheduler.groups.chat]")
        made.append(
            f"max_running = {running}" if bound and line.startswith("max_running =") else line
        )
    assert made.count(f"max_running = {running}") == 2, "the starter's scheduler changed"
    return "\n".join(made)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values) or [float("nan")]
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def agent_cycle(
    home: Path,
    turns: int,
    threads: int,
    probe: int,
    *,
    memory: bool,
    otel: str | None = None,
    shape: str = "burst",
    null_memory: bool = False,
    running: int | None = None,
) -> dict[str, Any]:
    """One runtime's figures. ``shape``: ``"burst"`` (``turns`` over ``threads`` at once)
    or ``"ordered"`` (``threads`` conversations of ``turns // threads`` turns, each turn
    submitted when its thread's previous answer is delivered)."""
    if shape == "ordered":
        turns = threads * max(1, turns // threads)
    runtime, workload = build_runtime(
        home, memory=memory, otel=otel, null_memory=null_memory, running=running
    )
    inbox = runtime.open_inbox()
    expected: dict[str, str] = {}
    submitted_at: dict[str, float] = {}

    workload_cpu = 0.0

    async def run() -> tuple[float, list[float]]:
        nonlocal workload_cpu
        stop = asyncio.Event()
        serving = await started(runtime, stop)

        def expect(turn_id: str, a: int, b: int) -> None:
            expected[turn_id] = f"the sum is {a + b}"
            submitted_at[turn_id] = time.perf_counter()

        began_cpu = time.process_time()
        if shape == "ordered":
            rate = await ordered(inbox, workload, threads, turns // threads, expect)
        else:
            rate = await burst(inbox, workload, turns, threads, expect)
        workload_cpu = time.process_time() - began_cpu
        latencies = []
        loop = asyncio.get_running_loop()
        for i in range(probe):
            began = time.perf_counter()
            submitted = inbox.submit(
                NewTurnRequest(source="chat", thread_id="chat:probe", input=f"add {i} 1")
            )
            expected[submitted.id] = f"the sum is {i + 1}"
            waiter = loop.create_future()
            workload.waiters[submitted.id] = waiter
            if submitted.id not in workload.answers:
                await waiter
            latencies.append(workload.delivered_at[submitted.id] - began)
        stop.set()
        await serving
        return rate, latencies

    cpu = time.process_time()
    rate, probe_latencies = asyncio.run(run())
    cpu = time.process_time() - cpu
    total = turns + probe
    wrong = [t for t, answer in expected.items() if workload.answers.get(t) != answer]
    assert not wrong, f"{len(wrong)} wrong or missing answers, e.g. {wrong[:3]}"
    assert workload.model_calls == 2 * total, (workload.model_calls, total)
    assert workload.tool_calls == total, (workload.tool_calls, total)
    store = inbox.store
    finished = store.list_turns(TurnFilter(limit=total + 1))
    assert len(finished) == total
    assert all(t.status is TurnStatus.COMPLETED for t in finished)
    for turn in finished[:: max(1, total // 50)]:  # a sample's steps, in full
        kinds = [s.kind for s in store.steps(turn.id)]
        assert kinds.count("model_call") == 2, kinds
        assert "tool_call" in kinds, kinds
    store.close()
    run_latencies = [workload.delivered_at[t] - submitted_at[t] for t in submitted_at]
    return {
        "turns_per_s": rate,
        "p50_ms": 1000 * percentile(run_latencies, 0.5),
        "p99_ms": 1000 * percentile(run_latencies, 0.99),
        "one_at_a_time_p50_ms": 1000 * percentile(probe_latencies, 0.5),
        "cpu_ms_per_turn": 1000 * cpu / max(1, total),  # a start and a stop's, for none
        # the process's CPU (every thread) from first submit to last answer, per turn
        "workload_cpu_ms_per_turn": 1000 * workload_cpu / max(1, turns),
    }


def otel_cycles(args: argparse.Namespace) -> None:
    """``--otel``: the memory-on workload with toolang-otel off and on, interleaved."""
    import subprocess

    from otel import SINK  # bench/otel.py's collector stand-in

    sink = subprocess.Popen([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)
    cpu: dict[str, list[float]] = {"otel_off": [], "otel_on": []}
    try:
        assert sink.stdout is not None
        endpoint = f"http://127.0.0.1:{sink.stdout.readline().strip()}"
        for n in range(args.repeat):
            for variant, otel in (("otel_off", "off"), ("otel_on", endpoint)):
                with tempfile.TemporaryDirectory() as tmp:
                    figures = agent_cycle(
                        Path(tmp), args.turns, args.threads, args.probe, memory=True, otel=otel
                    )
                with tempfile.TemporaryDirectory() as tmp:  # less a start and a stop's CPU
                    fixed = agent_cycle(Path(tmp), 0, 1, 0, memory=True, otel=otel)
                figures["cpu_ms_per_turn"] -= fixed["cpu_ms_per_turn"] / (args.turns + args.probe)
                cpu[variant].append(figures["cpu_ms_per_turn"])
                print(
                    f"run {n + 1} {variant:8}: {figures['turns_per_s']:7.0f} turns/s   "
                    f"{figures['cpu_ms_per_turn']:.3f} ms CPU/turn"
                )
    finally:
        sink.terminate()
        sink.wait()
    paired = [on / off - 1 for on, off in zip(cpu["otel_on"], cpu["otel_off"], strict=True)]
    result = {
        "turns": args.turns,
        "repeat": args.repeat,
        "cpu_ms_per_turn_median": {v: round(statistics.median(c), 4) for v, c in cpu.items()},
        "otel_cpu_overhead_median": round(statistics.median(paired), 4),
        "goal": 0.10,
    }
    print(
        f"median: otel on {result['otel_cpu_overhead_median']:+.1%} CPU per turn against off "
        f"(each repeat's pair; memory on, default sampling, goal < 10 %)"
    )
    print(json.dumps(result))


def main() -> None:
    configure_logging(level="error")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--probe", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--null-memory",
        action="store_true",
        help="also memory on with a plugin that does nothing: the runtime's side of "
        "memory apart from the plugin's work",
    )
    parser.add_argument(
        "--shape",
        choices=("burst", "ordered", "both"),
        default="both",
        help="burst: every turn submitted at once; ordered: each thread's next turn "
        "when its previous answer is delivered (--turns // --threads per thread)",
    )
    parser.add_argument(
        "--running",
        type=int,
        default=None,
        help="chat turns running at once (the starter's [scheduler] and chat group "
        "max_running: 8 and 4)",
    )
    parser.add_argument(
        "--otel", action="store_true", help="toolang-otel off vs on (OTLP), memory on"
    )
    parser.add_argument(
        "--usage",
        action="store_true",
        help="the model reports token usage on every answer (what recording it costs)",
    )
    args = parser.parse_args()
    if args.otel:
        otel_cycles(args)
        return
    shapes = ("burst", "ordered") if args.shape == "both" else (args.shape,)
    kinds = [("memory_on", True, False), ("memory_off", False, False)]
    if args.null_memory:
        kinds.append(("memory_null", True, True))
    variants = [f"{shape}_{kind}" for shape in shapes for kind, _, _ in kinds]
    runs: dict[str, list[dict[str, Any]]] = {variant: [] for variant in variants}
    echo: list[float] = []
    reference: list[dict[str, Any]] = []
    for n in range(args.repeat):
        for shape in shapes:
            for variant, memory, null in kinds:
                with tempfile.TemporaryDirectory() as tmp:
                    figures = agent_cycle(
                        Path(tmp),
                        args.turns,
                        args.threads,
                        args.probe,
                        memory=memory,
                        shape=shape,
                        null_memory=null,
                        running=args.running,
                    )
                runs[f"{shape}_{variant}"].append(figures)
                print(
                    f"run {n + 1} {shape:7} {variant:10}: {figures['turns_per_s']:7.0f} turns/s "
                    f"  {figures['workload_cpu_ms_per_turn']:.3f} ms CPU/turn   "
                    f"p50 {figures['p50_ms']:7.1f} ms   p99 {figures['p99_ms']:7.1f} ms   "
                    f"one at a time p50 {figures['one_at_a_time_p50_ms']:.2f} ms"
                )
        with tempfile.TemporaryDirectory() as tmp:
            reference.append(
                reference_cycle(Path(tmp), args.threads, max(1, args.turns // args.threads))
            )
        print(
            f"run {n + 1} reference recorder (sqlite3, 4 commits/turn): "
            f"{reference[-1]['turns_per_s']:7.0f} turns/s   "
            f"{reference[-1]['cpu_ms_per_turn']:.3f} ms CPU/turn"
        )
        with tempfile.TemporaryDirectory() as tmp:
            echo.append(toolang_cycle(Path(tmp), args.turns, args.threads))
        print(f"run {n + 1} echo engine: {echo[-1]:7.0f} turns/s")

    def median(variant: str, key: str) -> float:
        return round(statistics.median(r[key] for r in runs[variant]), 3)

    echo_median = statistics.median(echo)
    reference_median = statistics.median(r["turns_per_s"] for r in reference)
    result: dict[str, Any] = {
        "turns": args.turns,
        "threads": args.threads,
        "repeat": args.repeat,
        "running": args.running,
        "echo_turns_per_s_median": round(echo_median),
        "reference_turns_per_s_median": round(reference_median),
        "reference_cpu_ms_per_turn_median": round(
            statistics.median(r["cpu_ms_per_turn"] for r in reference), 4
        ),
    }
    for variant in runs:
        rate = median(variant, "turns_per_s")
        result[f"{variant}_turns_per_s_median"] = round(rate)
        result[f"{variant}_ratio_to_echo"] = round(rate / echo_median, 3)
        result[f"{variant}_ratio_to_reference"] = round(rate / reference_median, 3)
        for key in ("p50_ms", "p99_ms", "one_at_a_time_p50_ms", "workload_cpu_ms_per_turn"):
            result[f"{variant}_{key}_median"] = median(variant, key)
    for shape in shapes:  # memory on against off, each repeat's pair
        pairs = zip(runs[f"{shape}_memory_on"], runs[f"{shape}_memory_off"], strict=True)
        paired = [(on["turns_per_s"] / off["turns_per_s"]) for on, off in pairs]
        result[f"{shape}_memory_on_to_off_median"] = round(statistics.median(paired), 3)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    result["goals"] = {
        "memory_on_turns_per_s": 1100,
        "memory_off_turns_per_s": 2000,
        "memory_on_one_at_a_time_p50_ms": 1.0,
        "ordered_memory_on_ratio_to_reference": 0.35,
        "ordered_memory_off_ratio_to_reference": 0.6,
        "memory_on_to_off": 0.75,
    }
    for shape in shapes:
        on, off = f"{shape}_memory_on", f"{shape}_memory_off"
        print(
            f"median {shape}: memory on {result[on + '_turns_per_s_median']} turns/s "
            f"({result[on + '_ratio_to_reference']} x reference, "
            f"{result[on + '_workload_cpu_ms_per_turn_median']} ms CPU/turn), memory off "
            f"{result[off + '_turns_per_s_median']} turns/s "
            f"({result[off + '_ratio_to_reference']} x reference, "
            f"{result[off + '_workload_cpu_ms_per_turn_median']} ms CPU/turn), "
            f"on/off {result[shape + '_memory_on_to_off_median']}; one at a time "
            f"{result[on + '_one_at_a_time_p50_ms_median']} / "
            f"{result[off + '_one_at_a_time_p50_ms_median']} ms"
        )
    print(
        f"reference recorder {result['reference_turns_per_s_median']} turns/s, "
        f"echo {result['echo_turns_per_s_median']} turns/s"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
