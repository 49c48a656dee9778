#!/usr/bin/env python3
"""Workflows: a 20-step pipeline (a DAG of width 4) against its critical-path bound.

The automator's ``workflow_run`` starts a workflow of ``--levels`` levels of
``--width`` steps (default 5 x 4 = 20); every step of a level depends on every step of
the level before, so the critical path is ``--levels`` steps long. Each step is a task
run of an agent turn answered by an instant scripted model. Steps run in parallel within
the fan-out budget (``[scheduler.groups.task] max_running`` = ``max_parallel_steps`` =
width).

wall: from the first step spawned to the last step terminal (the task-run observer's
clock). one_step: the same for a one-step workflow — what a single step costs through
the same machinery (spawn, admission, turn, finalize, advance). bound = levels x
one_step, the critical-path lower bound; wall / bound says what the fan-out and the
advancing between levels cost on top. serial = steps x one_step: what running the
steps one after another would take. With instant models every step is CPU work of the
one event loop, so the width cannot help much (wall ≈ serial); ``--model-ms`` repeats
the run with models that take that long, where the steps of a level overlap.

    python3 bench/workflows.py [--levels 5] [--width 4] [--repeat 3] [--model-ms 50]

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

import toolang_tools_automator
from toolang_core import NewTurnRequest, TaskRun, TurnStatus, hookimpl
from toolang_core.cli.cmd_run import freeze_heap  # what `toolang run` does
from toolang_core.config import load_config
from toolang_core.logs import configure_logging
from toolang_core.runtime import Runtime
from toolang_core.testing.models import ScriptedModel, text, tool_call

CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.05
shutdown_grace_seconds = 0

[models]
default = "scripted"

[scheduler]
max_running = {running}

[scheduler.groups.task]
max_running = {width}

[plugins.tools-automator]
max_parallel_steps = {width}
"""


def dag(levels: int, width: int) -> str:
    lines = ["steps:"]
    for level in range(levels):
        for n in range(width):
            lines += [
                f"  - id: s{level}_{n}",
                "    agent: assistant",
                f"    instruction: Step {n} of level {level}.",
            ]
            if level:
                deps = ", ".join(f"s{level - 1}_{m}" for m in range(width))
                lines.append(f"    depends_on: [{deps}]")
    return "\n".join(lines) + "\n"


class Watch:
    """When the first step was spawned and when each step ended."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.ended: dict[str, float] = {}
        self.statuses: dict[str, str] = {}

    @hookimpl
    def toolang_observe_task_run(self, run: TaskRun, runtime: Runtime) -> None:
        if "workflow_run" not in run.metadata:
            return
        now = time.perf_counter()
        if self.first is None:
            self.first = now
        if run.status.is_terminal:
            self.ended[run.id] = now
            self.statuses[run.id] = run.status.value


def answer(yaml_text: str, model_ms: float) -> Any:
    async def respond(request: Any) -> Any:
        said = [m for m in request.messages if m.role == "user"][-1].content
        if said != "go":
            if model_ms:
                await asyncio.sleep(model_ms / 1000)
            return text("done")  # a step
        index = sum(1 for m in request.messages if m.role == "assistant")
        steps = [
            tool_call("workflow_save", {"name": "bench", "yaml_content": yaml_text}),
            tool_call("workflow_run", {"name": "bench"}),
            text("started"),
        ]
        return steps[index]

    return respond


def one_workflow(home: Path, levels: int, width: int, model_ms: float = 0.0) -> float:
    home.mkdir(parents=True)
    (home / "toolang.toml").write_text(CONFIG.format(width=width, running=width + 2))
    watch = Watch()
    model = ScriptedModel(answer(dag(levels, width), model_ms))
    runtime = Runtime.with_plugins(
        load_config(home / "toolang.toml", env={}),
        [
            ("tools-automator", toolang_tools_automator),
            ("scripted", model.plugin()),
            ("watch", watch),
        ],
        env={},
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(
        NewTurnRequest(source="chat", thread_id="cli:bench", input="go", owner="bench")
    ).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=(), on_started=freeze_heap))
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    steps = levels * width
    assert len(watch.ended) == steps, (len(watch.ended), steps)
    assert set(watch.statuses.values()) == {"completed"}, watch.statuses
    assert watch.first is not None
    inbox.store.close()
    return max(watch.ended.values()) - watch.first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", type=int, default=5)
    parser.add_argument("--width", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--model-ms", type=float, default=50.0, help="also run with models this slow (0: skip)"
    )
    args = parser.parse_args()
    configure_logging(level="warning")
    walls, ones = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.repeat):
            ones.append(one_workflow(Path(tmp) / f"one{n}", 1, 1))
            walls.append(one_workflow(Path(tmp) / f"dag{n}", args.levels, args.width))
            print(
                f"repeat {n + 1}: {args.levels * args.width} steps in {walls[-1] * 1000:.1f} ms; "
                f"one step {ones[-1] * 1000:.1f} ms"
            )
        slow_walls, slow_ones = [], []
        for n in range(args.repeat if args.model_ms else 0):
            slow_ones.append(one_workflow(Path(tmp) / f"slow1{n}", 1, 1, args.model_ms))
            slow_walls.append(
                one_workflow(Path(tmp) / f"slow{n}", args.levels, args.width, args.model_ms)
            )
    wall, one = statistics.median(walls), statistics.median(ones)
    bound = args.levels * one
    steps = args.levels * args.width
    print(
        f"wall {wall * 1000:.1f} ms vs critical-path bound {bound * 1000:.1f} ms "
        f"({args.levels} levels x {one * 1000:.1f} ms): {wall / bound:.2f}x; "
        f"serial would take {steps * one * 1000:.1f} ms"
    )
    slow: dict[str, Any] = {}
    if slow_walls:
        slow_wall, slow_one = statistics.median(slow_walls), statistics.median(slow_ones)
        slow = {
            "model_ms": args.model_ms,
            "slow_wall_ms": round(slow_wall * 1000, 2),
            "slow_bound_ms": round(args.levels * slow_one * 1000, 2),
            "slow_wall_over_bound": round(slow_wall / (args.levels * slow_one), 3),
            "slow_wall_over_serial": round(slow_wall / (steps * slow_one), 3),
        }
        print(
            f"with {args.model_ms:g} ms models: wall {slow_wall * 1000:.1f} ms vs bound "
            f"{args.levels * slow_one * 1000:.1f} ms ({slow['slow_wall_over_bound']}x); "
            f"serial {steps * slow_one * 1000:.1f} ms"
        )
    print(
        json.dumps(
            {
                "steps": steps,
                "levels": args.levels,
                "width": args.width,
                "wall_ms": round(wall * 1000, 2),
                "one_step_ms": round(one * 1000, 2),
                "critical_path_bound_ms": round(bound * 1000, 2),
                "wall_over_bound": round(wall / bound, 3),
                "serial_ms": round(steps * one * 1000, 2),
                "wall_over_serial": round(wall / (steps * one), 3),
                "repeat": args.repeat,
                **slow,
            }
        )
    )


if __name__ == "__main__":
    main()
