#!/usr/bin/env python3
"""The HTTP server's cost over submitting in-process, its throughput and first token.

One runtime serves in this process with toolang-server on (loopback, port 0) and the
demo model (instant; streams word by word). In one run:

1. **submit → answer latency** for chat turns, one at a time: in-process (the inbox on
   the runtime's loop, waiting on the same delivery notification the server uses) and
   over HTTP (``POST /api/turns`` with ``wait``, from a separate client process with a
   kept-alive connection) — p50/p99 and their difference and ratio;
2. **throughput**: chat turns per second with 50 concurrent HTTP clients, each on its
   own kept-alive connection submitting with ``wait`` and checking every answer, next to
   50 concurrent in-process submitters measured just before (same load on the machine);
   afterwards every one of those turns must be completed in the store with its answer.
   The clients are asyncio tasks in one process (``--processes``) speaking plain
   HTTP/1.1: they share the machine's two cores with the server, so the load generator
   must be cheap — its process count and CPU per turn are printed with the figure;
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

from _http import read_response

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


def client_main(
    url: str, mode: str, count: int, clients: int, offset: int = 0, *, prefix: str = "tp"
) -> None:
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
        _throughput(url, clients, count, offset, prefix)


def _throughput(url: str, clients: int, per_client: int, offset: int, prefix: str) -> None:
    """``clients`` concurrent clients in this one process, each on its own kept-alive
    connection, each submitting ``per_client`` turns one after another and checking
    every answer. A plain HTTP/1.1 client on asyncio streams: the load generator shares
    the machine's cores with the server, so it must cost little CPU (5 processes of 10
    threads with httpx's sync client took about 0.7 of a core, this about 0.03)."""
    cpu = time.process_time()
    results = asyncio.run(_drive(url, clients, per_client, offset, prefix))
    cpu = time.process_time() - cpu
    # perf_counter is the system's monotonic clock: comparable across client processes.
    started, ended = min(r[0] for r in results), max(r[1] for r in results)
    done = sum(r[2] for r in results)
    print(json.dumps({"turns": done, "started": started, "ended": ended, "client_cpu": cpu}))


async def _drive(
    url: str, clients: int, per_client: int, offset: int, prefix: str
) -> list[tuple[float, float, int]]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    connections = [await asyncio.open_connection(host, int(port)) for _ in range(clients)]
    gate = asyncio.Event()  # every connection open before the clock starts

    async def one(index: int) -> tuple[float, float, int]:
        reader, writer = connections[index - offset]
        await gate.wait()
        started, done = time.perf_counter(), 0
        for n in range(per_client):
            said = f"c{index} {n}"
            body = json.dumps(
                {"input": said, "thread_id": f"{prefix}:{index}", "wait": 60}
            ).encode()
            writer.write(
                b"POST /api/turns HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (host.encode(), len(body), body)
            )
            status, answer = await read_response(reader)
            if status != 200 or answer.get("status") != "completed":
                raise RuntimeError(f"turn {said!r} did not complete: {status} {answer}")
            if answer.get("output") != f"(demo model) You said: {said}":
                raise RuntimeError(f"turn {said!r} answered {answer.get('output')!r}")
            done += 1
        writer.close()
        return started, time.perf_counter(), done

    tasks = [asyncio.create_task(one(i)) for i in range(offset, offset + clients)]
    gate.set()
    return await asyncio.gather(*tasks)


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


def run_throughput(
    url: str, clients: int, per_client: int, processes: int, prefix: str
) -> dict[str, float]:
    """``clients`` concurrent HTTP clients spread over ``processes`` client processes."""
    share = [clients // processes + (i < clients % processes) for i in range(processes)]
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
                "--prefix",
                prefix,
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i, n in enumerate(share)
        if n
    ]
    printed = [p.communicate(timeout=1800)[0] for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError("a client process failed (its error is above)")
    outs = [json.loads(text.strip().splitlines()[-1]) for text in printed]
    return {
        "turns": sum(o["turns"] for o in outs),
        "expected": clients * per_client,
        "seconds": max(o["ended"] for o in outs) - min(o["started"] for o in outs),
        "client_cpu": sum(o["client_cpu"] for o in outs),
        "processes": len(procs),
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


async def in_process_throughput(
    runtime: object, clients: int, per_client: int
) -> tuple[float, float]:
    """Chat turns/s with ``clients`` concurrent in-process submitters (the runtime's own
    ceiling on this machine, to compare the HTTP figure with), and the CPU ms per turn."""
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

    cpu, started = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(clients)))
    turns = clients * per_client
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return turns / elapsed, cpu * 1000 / turns


def check_stored(runtime: object, clients: int, per_client: int, prefix: str) -> None:
    """Every turn the HTTP clients were answered for is completed in the store, with the
    answer to what was said (nothing lost, nothing answered twice)."""
    from toolang_core import TurnFilter

    store = runtime.inbox.store  # type: ignore[attr-defined]
    for index in range(clients):
        turns = store.list_turns(TurnFilter(thread_id=f"{prefix}:{index}", limit=1000))
        said = sorted(t.input for t in turns if t.status.value == "completed")
        expected = sorted(f"c{index} {n}" for n in range(per_client))
        if len(turns) != per_client or said != expected:
            raise RuntimeError(f"thread {prefix}:{index}: stored {said}, expected {expected}")
        for turn in turns:
            if turn.output != f"(demo model) You said: {turn.input}":
                raise RuntimeError(f"turn {turn.id} stored the answer {turn.output!r}")


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
            http_latency = await asyncio.to_thread(run_client, url, "latency", args.turns)
            http_ttft = await asyncio.to_thread(run_client, url, "ttft", args.turns)
            clients, processes = args.clients, args.processes
            await asyncio.to_thread(run_throughput, url, clients, 2, processes, "warm")
            # Side by side, so both see the same load on this shared machine.
            local_throughput, local_cpu = await in_process_throughput(
                runtime, clients, args.per_client
            )
            cpu_before = time.process_time()
            throughput = await asyncio.to_thread(
                run_throughput, url, clients, args.per_client, processes, "tp"
            )
            server_cpu = time.process_time() - cpu_before
            check_stored(runtime, clients, args.per_client, "tp")
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
    # How much of a core the server got meanwhile: below 1, the machine's other work (the
    # clients, anything else running) held it back, not the server.
    figures["server_cpu_share_of_a_core"] = round(server_cpu / throughput["seconds"], 2)
    figures["inprocess_cpu_ms_per_turn"] = round(local_cpu, 3)
    figures["http_cpu_overhead_ms_per_turn"] = round(
        figures["server_cpu_ms_per_http_turn"] - local_cpu,
        3,  # type: ignore[operator]
    )
    figures["throughput_completed"] = f"{throughput['turns']}/{throughput['expected']}"
    figures["client_processes"] = throughput["processes"]
    figures["client_cpu_ms_per_turn"] = round(
        throughput["client_cpu"] * 1000 / throughput["turns"], 3
    )
    figures["client_cpu_share_of_a_core"] = round(
        throughput["client_cpu"] / throughput["seconds"], 2
    )
    figures["clients"] = args.clients
    figures["turns"] = args.turns
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--per-client", type=int, default=20)
    parser.add_argument(
        "--processes", type=int, default=1, help="client processes the HTTP clients share"
    )
    parser.add_argument("--client", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="latency", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--offset", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--prefix", default="tp", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        client_main(
            args.client, args.mode, args.count, args.clients, args.offset, prefix=args.prefix
        )
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
        f"(= {figures['server_bound_turns_per_s_per_core']} turns/s per core it had alone; "
        f"in-process {figures['inprocess_cpu_ms_per_turn']} ms: HTTP costs "
        f"{figures['http_cpu_overhead_ms_per_turn']} ms more); it got "
        f"{figures['server_cpu_share_of_a_core']} of a core"
    )
    print(
        f"load generator: {figures['clients']} clients in {figures['client_processes']} "
        f"process(es), {figures['client_cpu_ms_per_turn']} ms client CPU per turn "
        f"({figures['client_cpu_share_of_a_core']} of a core); every answer checked, every "
        "turn completed in the store"
    )
    print(
        f"first token: in-process p50 {figures['inprocess_ttft_ms_p50']} ms, HTTP/SSE p50 "
        f"{figures['http_ttft_ms_p50']} ms: SSE adds {figures['ttft_overhead_p50_ms']} ms "
        "(goal < 10 ms)"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
