#!/usr/bin/env python3
"""The HTTP server's cost over submitting in-process, its throughput and first token.

One runtime serves in this process with toolang-server on (loopback, port 0) and the
demo model (instant; streams word by word). In one run:

1. **submit → answer latency** for chat turns, one at a time: in-process (the inbox on
   the runtime's loop, waiting on the same delivery notification the server uses) and
   over HTTP (``POST /api/turns`` with ``wait``, from a separate client process with a
   kept-alive connection) — p50/p99 and their difference and ratio;
2. **throughput**: chat turns per second with 50 concurrent HTTP clients (spread over
   client processes), each submitting and waiting for its answers on its own thread,
   next to 50 concurrent in-process submitters;
3. **time to first token**: submit → first streamed text, in-process (a TurnStreams
   watcher) and over HTTP (``"stream": true``, first ``text`` event).

    python3 bench/server.py [--turns 300] [--clients 50] [--per-client 20]

Goals (issue #20): HTTP p50 overhead < 2 ms over in-process; >= 500 chat turns/s over
HTTP; first token < 10 ms after the model yields it. The last line is a JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.5
[scheduler]
max_running = 64
[scheduler.groups.chat]
max_running = 64
[models]
default = "demo"
[log]
level = "warning"
[plugins.server]
enabled = true
port = 0
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# -- the client process ---------------------------------------------------------------


def client_main(url: str, mode: str, count: int, clients: int, offset: int = 0) -> None:
    import httpx

    if mode == "latency":
        out = []
        with httpx.Client(base_url=url, timeout=60) as client:
            for i in range(count + 20):
                started = time.perf_counter()
                r = client.post(
                    "/api/turns", json={"input": f"hi {i}", "thread_id": f"lat:{i}", "wait": 30}
                )
                elapsed = (time.perf_counter() - started) * 1000
                if r.status_code != 200 or r.json()["status"] != "completed":
                    raise RuntimeError(f"a turn did not complete: {r.text}")
                if i >= 20:  # warm-up
                    out.append(elapsed)
        print(json.dumps(out))
    elif mode == "ttft":
        out = []
        with httpx.Client(base_url=url, timeout=60) as client:
            for i in range(count + 10):
                started = time.perf_counter()
                first = None
                body = {"input": f"stream {i}", "thread_id": f"ttft:{i}", "stream": True}
                with client.stream("POST", "/api/turns", json=body) as r:
                    for line in r.iter_lines():
                        if first is None and line == "event: text":
                            first = (time.perf_counter() - started) * 1000
                if i >= 10:
                    out.append(first)
        print(json.dumps(out))
    else:
        _throughput(url, clients, count, offset)


def _throughput(url: str, clients: int, per_client: int, offset: int) -> None:
    """``clients`` threads, each with its own kept-alive connection, each submitting and
    waiting for ``per_client`` turns on its own thread (httpx's sync client: its async
    one costs several ms per request on its own, which would be measured instead)."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    def one(index: int) -> int:
        done = 0
        with httpx.Client(base_url=url, timeout=120) as client:
            for n in range(per_client):
                r = client.post(
                    "/api/turns",
                    json={"input": f"c{index} {n}", "thread_id": f"tp:{index}", "wait": 60},
                )
                done += r.status_code == 200 and r.json()["status"] == "completed"
        return done

    with ThreadPoolExecutor(clients) as pool:
        started = time.perf_counter()
        results = list(pool.map(one, range(offset, offset + clients)))
        elapsed = time.perf_counter() - started
    print(json.dumps({"turns": sum(results), "started": started, "seconds": elapsed}))


def run_client(url: str, mode: str, count: int, clients: int = 1) -> object:
    result = subprocess.run(
        [
            sys.executable,
            __file__,
            "--client",
            url,
            "--mode",
            mode,
            "--count",
            str(count),
            "--clients",
            str(clients),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def run_throughput(url: str, clients: int, per_client: int, processes: int) -> dict[str, float]:
    """``clients`` concurrent HTTP clients spread over ``processes`` client processes
    (one Python process cannot drive 50 busy connections by itself)."""
    share = [clients // processes + (i < clients % processes) for i in range(processes)]
    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--client",
                url,
                "--mode",
                "throughput",
                "--count",
                str(per_client),
                "--clients",
                str(n),
                "--offset",
                str(sum(share[:i])),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i, n in enumerate(share)
        if n
    ]
    outs = [json.loads(p.communicate(timeout=1800)[0].strip().splitlines()[-1]) for p in procs]
    elapsed = time.perf_counter() - started
    return {
        "turns": sum(o["turns"] for o in outs),
        "expected": clients * per_client,
        "seconds": max(o["seconds"] for o in outs),
        "wall_seconds": elapsed,
    }


# -- the runtime process ---------------------------------------------------------------


async def in_process(runtime: object, turns: int) -> tuple[list[float], list[float]]:
    from toolang_core import NewTurnRequest, TurnStreams
    from toolang_server.finished import FinishedTurns

    finished = FinishedTurns.of(runtime)  # type: ignore[arg-type]
    inbox = runtime.inbox  # type: ignore[attr-defined]
    latency = []
    for i in range(turns + 20):
        started = time.perf_counter()
        turn_id = inbox.submit(
            NewTurnRequest(source="chat", thread_id=f"in:{i}", input=f"hi {i}")
        ).id
        turn = await finished.wait(runtime, turn_id, 30)  # type: ignore[arg-type]
        assert turn.status.value == "completed"
        if i >= 20:
            latency.append((time.perf_counter() - started) * 1000)
    ttft = []
    streams = TurnStreams.of(runtime)  # type: ignore[arg-type]
    for i in range(turns + 10):
        started = time.perf_counter()
        turn_id = inbox.submit(
            NewTurnRequest(source="chat", thread_id=f"inttft:{i}", input=f"stream {i}")
        ).id
        with streams.watch(turn_id) as watch:
            await asyncio.wait_for(watch.queue.get(), 30)
            first = (time.perf_counter() - started) * 1000
        await finished.wait(runtime, turn_id, 30)  # type: ignore[arg-type]
        if i >= 10:
            ttft.append(first)
    return latency, ttft


async def in_process_throughput(runtime: object, clients: int, per_client: int) -> float:
    """Chat turns/s with ``clients`` concurrent in-process submitters (the runtime's own
    ceiling on this machine, to compare the HTTP figure with)."""
    from toolang_core import NewTurnRequest
    from toolang_server.finished import FinishedTurns

    finished = FinishedTurns.of(runtime)  # type: ignore[arg-type]
    inbox = runtime.inbox  # type: ignore[attr-defined]

    async def one(index: int) -> None:
        for n in range(per_client):
            turn_id = inbox.submit(
                NewTurnRequest(source="chat", thread_id=f"itp:{index}", input=f"c{index} {n}")
            ).id
            turn = await finished.wait(runtime, turn_id, 60)  # type: ignore[arg-type]
            assert turn.status.value == "completed"

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(clients)))
    return clients * per_client / (time.perf_counter() - started)


async def bench(args: argparse.Namespace) -> dict[str, object]:
    from toolang_core import Runtime, load_config
    from toolang_core.cli.cmd_run import freeze_heap  # what `toolang run` does

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "toolang.toml").write_text(CONFIG)
        env = {"TOOLANG_LOAD_PLUGINS": "server,model-demo"}
        runtime = Runtime.from_config(load_config(home / "toolang.toml", env=env), env=env)
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=(), on_started=freeze_heap))
        url_file = home / ".toolang" / "server.url"
        while not url_file.is_file():
            await asyncio.sleep(0.01)
        url = url_file.read_text().strip()
        try:
            local_latency, local_ttft = await in_process(runtime, args.turns)
            local_throughput = await in_process_throughput(runtime, args.clients, args.per_client)
            http_latency = await asyncio.to_thread(run_client, url, "latency", args.turns)
            http_ttft = await asyncio.to_thread(run_client, url, "ttft", args.turns)
            await asyncio.to_thread(run_throughput, url, args.clients, 2, args.processes)  # warm
            cpu_before = time.process_time()
            throughput = await asyncio.to_thread(
                run_throughput, url, args.clients, args.per_client, args.processes
            )
            server_cpu = time.process_time() - cpu_before
        finally:
            stop.set()
            await serving
    figures: dict[str, object] = {}
    for name, values in (
        ("inprocess_ms", local_latency),
        ("http_ms", http_latency),
        ("inprocess_ttft_ms", local_ttft),
        ("http_ttft_ms", http_ttft),
    ):
        figures[f"{name}_p50"] = round(percentile(values, 0.5), 3)  # type: ignore[arg-type]
        figures[f"{name}_p99"] = round(percentile(values, 0.99), 3)  # type: ignore[arg-type]
    p50_http, p50_local = figures["http_ms_p50"], figures["inprocess_ms_p50"]
    figures["http_overhead_p50_ms"] = round(p50_http - p50_local, 3)  # type: ignore[operator]
    figures["http_over_inprocess_p50_ratio"] = round(p50_http / p50_local, 2)  # type: ignore[operator]
    figures["ttft_overhead_p50_ms"] = round(
        figures["http_ttft_ms_p50"] - figures["inprocess_ttft_ms_p50"], 3
    )  # type: ignore[operator]
    assert isinstance(throughput, dict)
    figures["throughput_turns_per_s"] = round(throughput["turns"] / throughput["seconds"], 1)
    figures["inprocess_throughput_turns_per_s"] = round(local_throughput, 1)
    figures["throughput_http_over_inprocess"] = round(
        figures["throughput_turns_per_s"] / local_throughput, 2
    )  # type: ignore[operator]
    # The clients share this machine's cores with the server: the server's own CPU per
    # turn says what it could do with a core to itself.
    figures["server_cpu_ms_per_http_turn"] = round(server_cpu * 1000 / throughput["turns"], 3)
    figures["server_bound_turns_per_s_per_core"] = round(throughput["turns"] / server_cpu, 1)
    figures["throughput_completed"] = f"{throughput['turns']}/{throughput['expected']}"
    figures["clients"] = args.clients
    figures["turns"] = args.turns
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--per-client", type=int, default=20)
    parser.add_argument("--processes", type=int, default=5, help="client processes")
    parser.add_argument("--client", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="latency", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--offset", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        client_main(args.client, args.mode, args.count, args.clients, args.offset)
        return
    os.environ.pop("TOOLANG_LOAD_PLUGINS", None)
    from toolang_core.logs import configure_logging

    configure_logging(level="warning", fmt="json")  # a log line per turn would be measured
    figures = asyncio.run(bench(args))
    print(
        f"submit -> answer, one at a time: in-process p50 {figures['inprocess_ms_p50']} ms "
        f"p99 {figures['inprocess_ms_p99']} ms; HTTP p50 {figures['http_ms_p50']} ms "
        f"p99 {figures['http_ms_p99']} ms; HTTP adds {figures['http_overhead_p50_ms']} ms at "
        f"p50 ({figures['http_over_inprocess_p50_ratio']}x) (goal < 2 ms)"
    )
    print(
        f"throughput with {figures['clients']} HTTP clients: "
        f"{figures['throughput_turns_per_s']} chat turns/s "
        f"({figures['throughput_completed']} completed) (goal >= 500); in-process "
        f"{figures['inprocess_throughput_turns_per_s']} turns/s "
        f"({figures['throughput_http_over_inprocess']}x); the server spent "
        f"{figures['server_cpu_ms_per_http_turn']} ms CPU per HTTP turn "
        f"(= {figures['server_bound_turns_per_s_per_core']} turns/s per core it had alone)"
    )
    print(
        f"first token: in-process p50 {figures['inprocess_ttft_ms_p50']} ms, HTTP/SSE p50 "
        f"{figures['http_ttft_ms_p50']} ms: SSE adds {figures['ttft_overhead_p50_ms']} ms "
        "(goal < 10 ms)"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
