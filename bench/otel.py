#!/usr/bin/env python3
"""The cost of toolang-otel on agent turns: the same turns with the plugin off and on.

Each turn is a real agent turn in a real runtime (SQLite store): a model call that asks
for one tool call, the tool through the whole hook chain, and a second model call that
answers — with an instant scripted model. Threads run concurrently, each thread's turns
in order. Modes, interleaved round by round:

    off         toolang-otel not installed in the runtime
    none        installed, exporter = "none" (the plugin's default: no SDK, and its turn
                hooks named inactive for the run, so the core calls none of them)
    otlp        exporter = "otlp" (OTLP/HTTP protobuf) to a collector stand-in in another
                process that answers 200 to every export: the SDK's BatchSpanProcessor and
                PeriodicExportingMetricReader doing their real work, at the default
                sampling (sample_ratio = 0.05; metrics count every turn)

    traces      only traces exported (metrics = false)
    metrics     only metrics exported (traces = false)
    otlp-all    otlp with sample_ratio = 1: every turn traced

Reported per mode: turns/s (first admission to last finish) and the process's CPU time
per turn (every thread, the exporters' included, less the CPU of starting and stopping
an empty runtime in the same mode; steadier than wall time on a shared machine), each
as the median over rounds of the overhead against ``off`` in the same round. Then the
plugin alone: its turn hooks fed the same turn's steps, flushed over OTLP. Goal: CPU
overhead < 10 % at the default sampling. The last line is JSON.

    python3 bench/otel.py [--threads 40] [--turns 25] [--rounds 3] [--modes off,none,otlp,otlp-all]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import toolang_otel
from toolang_core import NewTurnRequest, Tool, TurnStatus, hookimpl, load_config
from toolang_core.runtime import Runtime
from toolang_core.testing.models import ScriptedModel, text, tool_call
from toolang_otel.settings import OtelSettings

GOAL = 0.10
DEFAULT_RATIO = OtelSettings().sample_ratio
OTLP = 'exporter = "otlp"\nendpoint = "{endpoint}"\n'
MODES = {
    "off": "",
    "none": "",
    "otlp": OTLP,
    "traces": OTLP + "metrics = false\n",
    "metrics": OTLP + "traces = false\n",
    "otlp-all": OTLP + "sample_ratio = 1\n",
}
"""``[plugins.otel]`` of each mode (``off``: the plugin not installed)."""

SINK = textwrap.dedent(
    """
    import sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_port, flush=True)
    server.serve_forever()
    """
)


def add(a: int, b: int) -> int:
    """Add two numbers.

    :param a: the first
    :param b: the second
    """
    return a + b


class Tools:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        register(Tool.from_function(add, blocking=False))


def answer(request):
    if request.messages[-1].role == "tool":
        return text("the sum is " + json.loads(request.messages[-1].content)["output"].__str__())
    return tool_call("add", {"a": 2, "b": 3})


def run_once(mode: str, threads: int, turns: int, endpoint: str) -> tuple[float, float]:
    """Turns per second (first admission to last finish) and the process's CPU time per
    turn in ms (every thread: the exporters' too), for one fresh runtime."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        config = (
            '[models]\ndefault = "scripted"\n'
            "[runtime]\npoll_seconds = 0.05\nshutdown_grace_seconds = 5\n"
        )
        model = ScriptedModel(answer)
        # Keep no call history: a real model keeps none, and every request kept (two a
        # turn, with their messages) grows the heap each full garbage collection walks —
        # up to half a turn's CPU by the end of a run, and more in whichever mode's
        # collections fall later.
        model.calls = deque(maxlen=1)  # type: ignore[assignment]
        plugins: dict[str, object] = {
            "scripted": model.plugin(),
            "tools": Tools(),
        }
        if mode != "off":
            plugins["otel"] = toolang_otel
            config += f"[plugins.otel]\n{MODES[mode].format(endpoint=endpoint)}"
        (home / "toolang.toml").write_text(config)
        env = {"HOME": tmp}
        runtime = Runtime.with_plugins(
            load_config(home / "toolang.toml", env=env), plugins.items(), env=env
        )
        inbox = runtime.open_inbox()
        ids = [
            inbox.submit(NewTurnRequest(source="chat", thread_id=f"bench:{t}", input=f"add {n}")).id
            for n in range(turns)
            for t in range(threads)
        ]
        gc.collect()  # the last run's garbage is not this run's to collect
        cpu = time.process_time()
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        cpu = time.process_time() - cpu
        if not ids:  # the fixed cost of a start and a stop
            return 0.0, cpu * 1000
        done = [inbox.get(i) for i in ids]
        assert all(t.status is TurnStatus.COMPLETED for t in done), "a turn did not complete"
        assert all(t.output == "the sum is 5" for t in done)
        start = min(t.started_at for t in done if t.started_at is not None)
        end = max(t.finished_at for t in done if t.finished_at is not None)
        return len(done) / (end - start), cpu * 1000 / len(done)


def isolated(endpoint: str, sample_ratio: float, turns: int = 3000) -> float:
    """The plugin's own CPU per turn in µs, every thread included (its exporters'):
    the steps of the benchmark's turn fed straight to its turn hooks (and each model call's
    outbound headers asked for, as the core asks before the call), then flushed over
    OTLP. Steadier than the difference of two runtimes on a shared machine."""
    import attrs

    from toolang_core import StepRecord, TurnRequest
    from toolang_otel.telemetry import Telemetry
    from toolang_otel.turns import TurnTelemetry

    settings = OtelSettings(exporter="otlp", endpoint=endpoint, sample_ratio=sample_ratio)
    telemetry = Telemetry(settings)
    hooks = TurnTelemetry(telemetry, settings, default_agent="assistant")
    now = time.time()
    call = {"id": "c", "name": "add", "params": {"a": 2, "b": 3}}
    model = {
        "model": "scripted",
        "agent": "assistant",
        "response": {"text": "", "tool_calls": [call], "usage": {}, "model": "scripted"},
    }
    chain = [
        {"stage": stage, "verdict": verdict, "plugin": None, "detail": ""}
        for stage, verdict in (
            ("SecurityFilter", "pass"),
            ("ApprovalGate", "pass"),
            ("execute", "ok"),
        )
    ]
    tool = {"call": call, "result": {"ok": True, "output": 5}, "chain": chain}
    cpu = time.process_time()
    for n in range(turns):
        turn = TurnRequest(
            id=f"t{n}",
            seq=n,
            source="chat",
            thread_id="bench:0",
            thread_group="chat",
            priority=100,
            rank=0.0,
            input="",
            status=TurnStatus.RUNNING,
            attempt=1,
            created_at=now,
            updated_at=now,
            started_at=now + 0.001,
        )
        hooks.started(turn)
        for seq, (kind, data) in enumerate(
            (
                ("prompt_build", {}),
                ("model_call", model),
                ("tool_call", tool),
                ("model_call", model),
            )
        ):
            key = f"{turn.id}:{kind}:{seq}"
            if kind == "model_call":  # its traceparent (toolang_outbound_headers), asked first
                hooks.headers(turn, key)
            hooks.step(
                StepRecord(turn.id, seq, 1, kind, "completed", now, now + 1e-4, data, None, key)
            )
        hooks.finished(attrs.evolve(turn, status=TurnStatus.COMPLETED, finished_at=now + 0.002), [])
        if n % 200 == 199:  # export as a collector takes it: never a full queue
            telemetry.flush(60)
    telemetry.flush(60)
    if telemetry.metric_reader is not None:  # a collection, exported: what a turn adds to it
        telemetry.metric_reader.collect()
    cpu = time.process_time() - cpu
    asyncio.run(telemetry.shutdown())
    return cpu * 1e6 / turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=40)
    parser.add_argument("--turns", type=int, default=25, help="turns per thread")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--modes", default="off,none,otlp,otlp-all", help=f"comma-separated, of: {', '.join(MODES)}"
    )
    args = parser.parse_args()
    sink = subprocess.Popen([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)
    try:
        assert sink.stdout is not None
        endpoint = f"http://127.0.0.1:{sink.stdout.readline().strip()}"
        modes = tuple(m.strip() for m in args.modes.split(","))
        unknown = [m for m in modes if m not in MODES]
        if unknown or modes[0] != "off":
            parser.error(f"--modes: the first must be off, then any of {', '.join(MODES)}")
        rates: dict[str, list[float]] = {m: [] for m in modes}
        cpus: dict[str, list[float]] = {m: [] for m in modes}
        run_once("otlp", 2, 2, endpoint)  # warm-up: imports, first SDK set-up
        for round_no in range(args.rounds):
            for mode in modes:
                rate, cpu = run_once(mode, args.threads, args.turns, endpoint)
                # Less what starting and stopping a runtime costs in this mode (the
                # SDK's set-up, its threads): a per-turn figure, whatever the run's size.
                fixed = run_once(mode, 0, 0, endpoint)[1]
                cpu -= fixed / (args.threads * args.turns)
                rates[mode].append(rate)
                cpus[mode].append(cpu)
                print(
                    f"round {round_no + 1} {mode:<8} {rate:8.1f} turns/s {cpu:6.3f} ms CPU/turn",
                    flush=True,
                )
        alone = {
            label: statistics.median(isolated(endpoint, ratio) for _ in range(3))
            for label, ratio in (
                (f"default sampling ({DEFAULT_RATIO:g})", DEFAULT_RATIO),
                ("sample_ratio = 0.1", 0.1),
                ("sample_ratio = 1", 1.0),
            )
        }
    finally:
        sink.terminate()
        sink.wait()

    # Each round's mode against the same round's "off" (the machine is shared: rounds
    # differ more than modes do), then the median over rounds.
    def overheads(values: dict[str, list[float]], higher_is_better: bool) -> dict[str, float]:
        paired = {
            m: [
                (1 - v / base) if higher_is_better else (v / base - 1)
                for v, base in zip(values[m], values["off"], strict=True)
            ]
            for m in modes
        }
        return {m: statistics.median(p) for m, p in paired.items()}

    wall = overheads(rates, higher_is_better=True)
    cpu = overheads(cpus, higher_is_better=False)
    total = args.threads * args.turns
    print(
        f"\n{total} agent turns per run ({args.threads} threads x {args.turns}), median of "
        f"{args.rounds} rounds, overhead against off in the same round:"
    )
    for mode in modes:
        print(
            f"  {mode:<8} {statistics.median(rates[mode]):8.1f} turns/s ({wall[mode]:+6.1%})"
            f"   {statistics.median(cpus[mode]):6.3f} ms CPU/turn ({cpu[mode]:+6.1%})"
        )
    off_us = statistics.median(cpus["off"]) * 1000
    print(f"\nthe plugin alone, per turn (every thread), against {off_us:.0f} µs CPU of a turn:")
    for label, us in alone.items():
        print(f"  {label:<24} {us:6.1f} µs  ({us / off_us:+6.1%})")
    met = None
    if "otlp" in cpu:
        met = cpu["otlp"] < GOAL
        alone_met = alone[f"default sampling ({DEFAULT_RATIO:g})"] / off_us < GOAL
        print(
            f"goal: otlp (default sampling) CPU overhead < {GOAL:.0%}: "
            f"{'met' if met else 'MISSED'} (runtime against runtime), "
            f"{'met' if alone_met else 'MISSED'} (the plugin alone)"
        )
    summary = {
        "turns": total,
        "rounds": args.rounds,
        "turns_per_s": {m: statistics.median(r) for m, r in rates.items()},
        "cpu_ms_per_turn": {m: statistics.median(c) for m, c in cpus.items()},
        "overhead_wall": wall,
        "overhead_cpu": cpu,
        "plugin_alone_us_per_turn": alone,
        "goal_met": met,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
