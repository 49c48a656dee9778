#!/usr/bin/env python3
"""Teams: formation + one delegated task, next to the same task runs spawned directly.

team: a team of N workers (agents advertising ``survey``) is formed from the agent
pool (selection reads every agent's statistics from the store) and given one task: N
concurrent task runs, each an agent turn answered by an instant scripted model, then
resolved by majority vote and stored with every candidate; events go to the bus.

direct: the same N task runs spawned through the TaskRunController and waited for,
with nothing around them. team/direct is the cost of the team layer (formation,
selection, events, resolution, the team record) for one task.

    python3 bench/teams.py [--workers 3 10] [--repeat 3]

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

from toolang_core import AgentDefinition, AgentLoad, SpawnRequest, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import GroupConfig, ModelsConfig, RuntimeConfig, SchedulerConfig
from toolang_core.logs import configure_logging
from toolang_core.runtime import Runtime
from toolang_core.testing.models import ScriptedModel, text
from toolang_teams.coordinator import FormRequest, TeamCoordinator


class Agents:
    label = "builtin"
    name = "bench-agents"

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def load(self, context: object) -> AgentLoad:
        definitions = [AgentDefinition(name="lead")]
        definitions += [
            AgentDefinition(name=f"w{i:02d}", capabilities=("survey",)) for i in range(self.workers)
        ]
        return AgentLoad(definitions=definitions)

    @hookimpl
    def toolang_agent_sources(self) -> Agents:
        return self


def make_runtime(home: Path, workers: int) -> Runtime:
    groups = {"task": GroupConfig(max_running=workers)}
    config = ToolangConfig(
        base_dir=home,
        home=home / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.02, shutdown_grace_seconds=0),
        scheduler=SchedulerConfig(max_running=workers + 2, groups=groups),
        models=ModelsConfig(default="scripted"),
    )
    model = ScriptedModel(lambda request: text("Paris"))
    plugins = [("scripted", model.plugin()), ("agents", Agents(workers))]
    return Runtime.with_plugins(config, plugins, env={})


async def serve_and(runtime: Runtime, body: Any) -> float:
    stop = asyncio.Event()
    serving = asyncio.create_task(runtime.serve(stop, sources=()))
    while runtime.scheduler is None:
        await asyncio.sleep(0.001)
    try:
        started = time.perf_counter()
        await body()
        return time.perf_counter() - started
    finally:
        stop.set()
        await serving


def team_once(workers: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        runtime = make_runtime(Path(tmp), workers)

        async def body() -> None:
            teams = TeamCoordinator(runtime, runtime.task_runs)
            team = await teams.form(
                FormRequest(
                    owner="ada",
                    parent_thread_id="chat:bench",
                    goal="bench",
                    leader="lead",
                    capability="survey",
                    workers=workers,
                )
            )
            done = await teams.delegate(team.id, "capital of France?", owner="ada")
            assert done.status == "completed", done
            assert len(done.candidates) == workers, done

        return asyncio.run(serve_and(runtime, body))


def direct_once(workers: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        runtime = make_runtime(Path(tmp), workers)

        async def body() -> None:
            runs = runtime.task_runs
            spawned = [
                await runs.spawn(
                    SpawnRequest(
                        owner="ada",
                        parent_thread_id="chat:bench",
                        task="capital of France?",
                        agent_name=f"w{i:02d}",
                    )
                )
                for i in range(workers)
            ]
            done = await asyncio.gather(*(runs.wait(r.id, owner="ada") for r in spawned))
            assert all(r.status.value == "completed" for r in done)

        return asyncio.run(serve_and(runtime, body))


def main() -> None:
    configure_logging(level="warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[3, 10])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    figures: dict[str, Any] = {}
    for n in args.workers:
        team = statistics.median(team_once(n) for _ in range(args.repeat))
        direct = statistics.median(direct_once(n) for _ in range(args.repeat))
        print(
            f"{n} workers: team {team * 1000:.1f} ms, direct {direct * 1000:.1f} ms, "
            f"ratio {team / direct:.2f}"
        )
        figures[f"workers_{n}"] = {
            "team_ms": round(team * 1000, 1),
            "direct_ms": round(direct * 1000, 1),
            "ratio": round(team / direct, 2),
        }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
