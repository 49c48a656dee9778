#!/usr/bin/env python3
"""What the OS sandbox adds to starting a tool's program, measured in one run.

Runs ``/bin/true`` through ``run_tool_process`` — the one place tools start programs —
--runs times unsandboxed (``[tools] sandbox = "off"``) and sandboxed (the default,
bubblewrap with the default limits, so, for a runtime running as root, a pids cgroup
is included), alternating so drift hits both alike, after a warm-up that pays the
one-time probe and starts the bubblewraps that wait for programs
(``toolang_core.sandbox.pool``: a call in a row with others finds one waiting, as in a
turn). For a runtime running as root it also times the sandbox without
``max_processes`` (no limit in its cgroup). With --network it also times the sandbox
with ``network = "allow"`` (the proxy, and the bridge started inside). Reports p50/p95
of each, the p50 added by the sandbox (goal: < 15 ms on the development machine) and
the ratio, the CPU time each costs (this process and everything it waited for — wall
time grows with what else the machine runs, CPU time much less), and the load average
when it started; the last line is a JSON object.

On a machine that other work keeps busy, wall times measure the queue for a CPU more
than the sandbox: ``chrt -f 10 python3 bench/sandbox.py`` (root) runs it, and what it
starts, ahead of that work.

    python3 bench/sandbox.py [--runs 200] [--network]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from toolang_core import run_tool_process
from toolang_core.config import ToolangConfig, ToolsConfig
from toolang_core.runtime import Runtime
from toolang_core.sandbox.cgroup import process_limit_mode
from toolang_core.sandbox.support import sandbox_support
from toolang_core.testing.runtimes import tool_call_context


def context(base: Path, **tools: object) -> object:
    config = ToolangConfig(base_dir=base, home=base / ".toolang", tools=ToolsConfig(**tools))
    runtime = Runtime.with_plugins(config, [], env={})
    return tool_call_context(runtime, "exec_run")


def cpu_seconds() -> float:
    """CPU time of this process and of every process it waited for (bubblewrap and what
    ran inside it included): what a program costs whatever else the machine does."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def once(call: object) -> tuple[float, float]:
    """Wall time and CPU time (ms) of one ``/bin/true``."""
    cpu, start = cpu_seconds(), time.perf_counter()
    ran = await run_tool_process(["/bin/true"], context=call)  # type: ignore[arg-type]
    took, used = time.perf_counter() - start, cpu_seconds() - cpu
    assert ran.exit_code == 0, ran
    return took * 1000, used * 1000


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def measure(runs: int, network: bool) -> dict[str, list[tuple[float, float]]]:
    with tempfile.TemporaryDirectory(prefix="toolang-bench-") as tmp:
        base = Path(tmp)
        calls = {
            "unsandboxed": context(base / "off", sandbox="off"),
            "sandboxed": context(base / "on"),
        }
        if process_limit_mode().kind == "cgroup":  # root: what the pids cgroup costs
            calls["sandboxed_no_max_processes"] = context(base / "nolimit", max_processes=0)
        if network:
            calls["sandboxed_network"] = context(
                base / "net", network="allow", allow_hosts=("pypi.org",)
            )
        for call in calls.values():  # warm-up: the probe, imports, the waiting bubblewraps
            await once(call)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in calls}
        for _ in range(runs):
            for name, call in calls.items():
                times[name].append(await once(call))
        return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--network", action="store_true")
    args = parser.parse_args()
    found = sandbox_support()
    if not found.available:
        sys.exit(f"no sandbox on this machine: {found.problem}")
    load = os.getloadavg()[0]
    times = asyncio.run(measure(args.runs, args.network))
    figures: dict[str, object] = {
        "runs": args.runs,
        "load_average": round(load, 2),
        "sandbox": found.describe(),
    }
    wall_p50: dict[str, float] = {}
    cpu_p50: dict[str, float] = {}
    for name, pairs in times.items():
        wall, cpu = [w for w, _ in pairs], [c for _, c in pairs]
        wall_p50[name], cpu_p50[name] = statistics.median(wall), statistics.median(cpu)
        figures[f"{name}_p50_ms"] = round(wall_p50[name], 2)
        figures[f"{name}_p95_ms"] = round(percentile(wall, 0.95), 2)
        figures[f"{name}_cpu_p50_ms"] = round(cpu_p50[name], 2)
        print(
            f"{name:<18} p50 {wall_p50[name]:7.2f} ms   "
            f"p95 {percentile(wall, 0.95):7.2f} ms   cpu p50 {cpu_p50[name]:6.2f} ms"
        )
    figures["added_p50_ms"] = round(wall_p50["sandboxed"] - wall_p50["unsandboxed"], 2)
    figures["ratio_p50"] = round(wall_p50["sandboxed"] / wall_p50["unsandboxed"], 2)
    figures["added_cpu_p50_ms"] = round(cpu_p50["sandboxed"] - cpu_p50["unsandboxed"], 2)
    print(
        f"the sandbox adds {figures['added_p50_ms']} ms at p50 (x{figures['ratio_p50']}; "
        f"CPU {figures['added_cpu_p50_ms']} ms); goal < 15 ms — load average {load:.2f} "
        f"on {os.cpu_count()} CPUs; {found.describe()}"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
