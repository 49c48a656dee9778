#!/usr/bin/env python3
"""Task runs: spawn → terminal latency and throughput, next to plain agent turns.

taskruns: N task runs are spawned through the TaskRunController while a runtime serves
the same SQLite store. Each run is an agent turn (prompt build, one model call to an
instant scripted model, its steps and terminal state stored) and is then finalized
(final record, note merged into its parent thread, open record dropped) — the figure
is N / (first spawn → last run terminal). Latency is per run, from the moment its spawn
started to the moment the observer saw it terminal (queueing behind the budget
included); "run" latency is from its turn's start to terminal.

plain: the same N agent turns submitted as ordinary chat turns through the inbox, same
model, same executor, same budget — no control plane. taskruns/plain is the cost of
the control plane.

Both run under the same fan-out budget: ``[scheduler.groups.<group>] max_running``
(--budget). The store's running count of the task group is sampled at every run change;
its maximum must not exceed the budget.

    python3 bench/taskruns.py [--runs 1000] [--budget 8] [--repeat 3]

The last line is a JSON object with the figures (medians over the repeats).
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

from toolang_core import SpawnRequest, TaskRun, hookimpl
from toolang_core.cli.cmd_run import freeze_heap  # what `toolang run` does
from toolang_core.config import ToolangConfig
from toolang_core.config.model import (
    GroupConfig,
    ModelsConfig,
    RuntimeConfig,
    SchedulerConfig,
)
from toolang_core.logs import configure_logging
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnFilter, TurnStatus
from toolang_core.testing.models import ScriptedModel, text


class Watch:
    """Observer: when each run started and ended, and the task group's running count."""

    def __init__(self) -> None:
        self.started: dict[str, float] = {}
        self.ended: dict[str, float] = {}
        self.statuses: dict[str, str] = {}
        self.peak_running = 0
        self.runtime: Runtime | None = None

    @hookimpl
    def toolang_observe_task_run(self, run: TaskRun, runtime: Runtime) -> None:
        now = time.perf_counter()
        if run.status.value == "running":
            self.started[run.id] = now
        elif run.status.is_terminal:
            self.ended[run.id] = now
            self.statuses[run.id] = run.status.value
        if runtime.store is not None:
            running, _queued = runtime.store.group_load().get("task", (0, 0))
            self.peak_running = max(self.peak_running, running)


def config(home: Path, budget: int) -> ToolangConfig:
    groups = {name: GroupConfig(max_running=budget) for name in ("task", "chat")}
    return ToolangConfig(
        base_dir=home,
        home=home / ".toolang",
        scheduler=SchedulerConfig(max_running=budget * 2, groups=groups),
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
    )


def instant_model() -> ScriptedModel:
    return ScriptedModel(lambda request: text("done"))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def taskruns_cycle(home: Path, runs: int, budget: int) -> dict[str, Any]:
    watch = Watch()
    runtime = Runtime.with_plugins(
        config(home, budget), [("scripted", instant_model().plugin()), ("watch", watch)], env={}
    )
    spawned_at: dict[str, float] = {}

    async def run() -> float:
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=(), on_started=freeze_heap))
        while runtime.scheduler is None:
            await asyncio.sleep(0.001)
        controller = runtime.task_runs
        first = time.perf_counter()
        for n in range(runs):
            began = time.perf_counter()
            view = await controller.spawn(
                SpawnRequest(owner="bench", parent_thread_id="chat:bench", task=f"run {n}")
            )
            spawned_at[view.id] = began
            if n % 25 == 24:
                await asyncio.sleep(0)  # let the runtime work while we spawn
        while len(watch.ended) < runs:
            await asyncio.sleep(0.002)
        elapsed = max(watch.ended.values()) - first
        stop.set()
        await serving
        return runs / elapsed

    rate = asyncio.run(run())
    assert set(watch.statuses.values()) == {"completed"}, set(watch.statuses.values())
    latency = [watch.ended[i] - spawned_at[i] for i in spawned_at]
    run_latency = [watch.ended[i] - watch.started[i] for i in spawned_at if i in watch.started]
    return {
        "runs_per_s": rate,
        "p50_ms": percentile(latency, 0.5) * 1000,
        "p95_ms": percentile(latency, 0.95) * 1000,
        "max_ms": max(latency) * 1000,
        "run_p50_ms": percentile(run_latency, 0.5) * 1000,
        "peak_running": watch.peak_running,
    }


def plain_cycle(home: Path, runs: int, budget: int) -> float:
    runtime = Runtime.with_plugins(
        config(home, budget), [("scripted", instant_model().plugin())], env={}
    )
    inbox = runtime.open_inbox()

    async def run() -> float:
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=(), on_started=freeze_heap))
        while runtime.scheduler is None:
            await asyncio.sleep(0.001)
        first = time.perf_counter()
        for n in range(runs):
            inbox.submit(NewTurnRequest(source="chat", thread_id=f"chat:{n}", input=f"run {n}"))
            if n % 25 == 24:
                runtime.scheduler.wake()
                await asyncio.sleep(0)
        scheduler = runtime.scheduler
        while scheduler.admitted < runs or scheduler.running:
            await asyncio.sleep(0.002)
        elapsed = time.perf_counter() - first
        stop.set()
        await serving
        return runs / elapsed

    rate = asyncio.run(run())
    done = inbox.store.list_turns(TurnFilter(limit=runs + 1))
    assert len(done) == runs
    assert all(t.status is TurnStatus.COMPLETED for t in done)
    inbox.store.close()
    return rate


def main() -> None:
    configure_logging(level="warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--budget", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    ours: list[dict[str, Any]] = []
    plain: list[float] = []
    for n in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            ours.append(taskruns_cycle(Path(tmp) / "runs", args.runs, args.budget))
            plain.append(plain_cycle(Path(tmp) / "plain", args.runs, args.budget))
        last = ours[-1]
        print(
            f"run {n + 1}: task runs {last['runs_per_s']:6.0f}/s   plain turns {plain[-1]:6.0f}/s"
            f"   ratio {last['runs_per_s'] / plain[-1]:.2f}   spawn→terminal p50 "
            f"{last['p50_ms']:.0f} ms p95 {last['p95_ms']:.0f} ms   run p50 "
            f"{last['run_p50_ms']:.1f} ms   peak running {last['peak_running']}/{args.budget}"
        )

    def median(key: str) -> float:
        return statistics.median(r[key] for r in ours)

    peak = max(r["peak_running"] for r in ours)
    figures = {
        "runs": args.runs,
        "budget": args.budget,
        "repeat": args.repeat,
        "taskruns_per_s_median": round(median("runs_per_s")),
        "plain_turns_per_s_median": round(statistics.median(plain)),
        "ratio_median": round(
            statistics.median(r["runs_per_s"] / p for r, p in zip(ours, plain, strict=True)), 3
        ),
        "spawn_to_terminal_p50_ms_median": round(median("p50_ms"), 1),
        "spawn_to_terminal_p95_ms_median": round(median("p95_ms"), 1),
        "spawn_to_terminal_max_ms_median": round(median("max_ms"), 1),
        "run_p50_ms_median": round(median("run_p50_ms"), 2),
        "peak_running": peak,
        "budget_respected": peak <= args.budget,
    }
    print(
        f"median: {figures['taskruns_per_s_median']} task runs/s vs "
        f"{figures['plain_turns_per_s_median']} plain agent turns/s (ratio "
        f"{figures['ratio_median']}); spawn→terminal p50 "
        f"{figures['spawn_to_terminal_p50_ms_median']} ms; peak running {peak} "
        f"<= budget {args.budget}: {figures['budget_respected']}"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
