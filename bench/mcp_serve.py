#!/usr/bin/env python3
"""Calls/s through toolang's MCP endpoint: ``--sessions`` concurrent MCP client
sessions (the ``mcp`` SDK's own streamable-HTTP client) against a real `toolang run`
serving ``/api/mcp``, the demo model answering. Each call is a durable chat turn
(stored before it answers, followed to its end); every turn is checked in the store
afterwards. Besides turns/s and the latencies (which depend on what else runs on the
machine), the CPU time per turn of the runtime process and of the clients is printed.

The raw limit is measured in the same run with the same clients: the SDK's own
streamable-HTTP server (bench/_mcp_raw_server.py: ``MCPServer`` on uvicorn configured as
the toolang server plugin configures it, one tool of the same signature answering at
once; no store, no turn, no auth), and the ratio toolang / raw is printed. The clients
run in this process, the servers in their own: the runtime's CPU per turn is its own.

    python3 bench/mcp_serve.py [--sessions 20] [--calls 10] [--json]

``--json``: the endpoint set to ``json_response = true`` (one JSON body per call, no
progress notifications), the raw server likewise.

Goal (#34): >= 200 turns/s with 20 sessions. The last line is a JSON object with the
figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plugins" / "toolang-source-mcp" / "tests"))

from _proc import cpu_seconds  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402
from source_mcp_kit import ALICE, Home, install_kit  # noqa: E402

from toolang_core import TurnFilter  # noqa: E402
from toolang_core.store.sqlite import SQLiteStore  # noqa: E402
from toolang_core.testing.processes import free_port  # noqa: E402

RAW_SERVER = ROOT / "bench" / "_mcp_raw_server.py"


async def one_session(url: str, number: int, calls: int, latencies: list[float]) -> int:
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {ALICE}"})
    done = 0
    async with (
        client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for call in range(calls):
            started = time.perf_counter()
            result = await session.call_tool(
                "ask_assistant", {"text": f"bench {number}.{call}", "thread": f"bench-{number}"}
            )
            latencies.append(time.perf_counter() - started)
            if result.is_error:
                raise SystemExit(f"call failed: {result.content}")
            done += 1
    return done


async def measure(url: str, sessions: int, calls: int, server_pid: int) -> dict[str, float]:
    latencies: list[float] = []
    # one warm-up call (the first session and turn of the run), timed on its own
    first = time.perf_counter()
    await one_session(url, -1, 1, [])
    first_ms = (time.perf_counter() - first) * 1000
    server_cpu = cpu_seconds(server_pid)
    client_cpu = time.process_time()
    started = time.perf_counter()
    done = await asyncio.gather(*(one_session(url, n, calls, latencies) for n in range(sessions)))
    elapsed = time.perf_counter() - started
    turns = sum(done)
    client_used = time.process_time() - client_cpu
    server_used = cpu_seconds(server_pid)
    latencies.sort()
    figures = {
        "turns": turns,
        "seconds": round(elapsed, 3),
        "turns_per_s": round(turns / elapsed, 1),
        "p50_ms": round(statistics.median(latencies) * 1000, 1),
        "p95_ms": round(latencies[int(len(latencies) * 0.95) - 1] * 1000, 1),
        # CPU per turn does not depend on what else runs on the machine, unlike turns/s
        "client_cpu_ms_per_turn": round(client_used / turns * 1000, 2),
        "first_session_ms": round(first_ms, 1),
    }
    if server_cpu is not None and server_used is not None:
        figures["runtime_cpu_ms_per_turn"] = round((server_used - server_cpu) / turns * 1000, 2)
    return figures


def raw_limit(sessions: int, calls: int, options: list[str]) -> dict[str, float]:
    """The same clients against the SDK's bare streamable-HTTP server."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(RAW_SERVER), str(port), *options], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        if process.stdout.readline().strip() != "serving":
            raise SystemExit(f"{RAW_SERVER.name} did not start")
        return asyncio.run(measure(f"http://127.0.0.1:{port}/mcp", sessions, calls, process.pid))
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--calls", type=int, default=10, help="calls per session")
    parser.add_argument("--json", action="store_true", help="json_response = true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        install_kit(base / "site")
        home = Home(base / "home", base / "site")
        config = home.home / "toolang.toml"
        text = config.read_text().replace('"echo"', '"demo"')
        if args.json:
            text = text.replace(
                "[plugins.source-mcp]\n", "[plugins.source-mcp]\njson_response = true\n"
            )
        config.write_text(text, encoding="utf-8")
        home.env["TOOLANG_LOAD_PLUGINS"] = "source-mcp,model-demo,source-chat,server"
        home.start()
        try:
            assert home.process is not None
            figures = asyncio.run(
                measure(home.url + "/api/mcp", args.sessions, args.calls, home.process.pid)
            )
        finally:
            home.stop()
        store = SQLiteStore(home.home / ".toolang" / "toolang.db", read_only=True)
        try:
            stored = store.list_turns(TurnFilter(limit=100_000))
        finally:
            store.close()
        completed = sum(1 for t in stored if t.status.value == "completed")
        figures["stored_completed"] = completed
        assert completed == figures["turns"] + 1, (completed, figures)
    raw = raw_limit(args.sessions, args.calls, ["json"] if args.json else [])
    figures["raw_calls_per_s"] = raw["turns_per_s"]
    figures["raw_p50_ms"] = raw["p50_ms"]
    figures["raw_server_cpu_ms_per_call"] = raw.get("runtime_cpu_ms_per_turn", float("nan"))
    figures["raw_client_cpu_ms_per_call"] = raw["client_cpu_ms_per_turn"]
    figures["ratio_to_raw"] = round(figures["turns_per_s"] / raw["turns_per_s"], 2)
    print(
        f"{figures['turns']} MCP calls over {args.sessions} sessions in {figures['seconds']} s: "
        f"{figures['turns_per_s']} turns/s (goal >= 200); per call p50 {figures['p50_ms']} ms, "
        f"p95 {figures['p95_ms']} ms; {completed} turns completed in the store; CPU per "
        f"turn: runtime {figures.get('runtime_cpu_ms_per_turn', 'n/a')} ms, "
        f"clients {figures['client_cpu_ms_per_turn']} ms; the first session and call "
        f"{figures['first_session_ms']} ms"
    )
    print(
        f"raw limit, the SDK's bare streamable-HTTP server (same clients, no toolang): "
        f"{raw['turns_per_s']} calls/s, p50 {raw['p50_ms']} ms; CPU per call: server "
        f"{figures['raw_server_cpu_ms_per_call']} ms, clients {raw['client_cpu_ms_per_turn']} ms"
    )
    print(f"ratio toolang / raw: {figures['ratio_to_raw']}")
    # What each server would do with a core of its own (the clients share the machine).
    own = figures.get("runtime_cpu_ms_per_turn")
    if own and figures["raw_server_cpu_ms_per_call"]:
        figures["runtime_turns_per_cpu_s"] = round(1000 / own, 1)
        figures["raw_calls_per_cpu_s"] = round(1000 / figures["raw_server_cpu_ms_per_call"], 1)
        print(
            f"per server CPU-second: runtime {figures['runtime_turns_per_cpu_s']} turns, "
            f"raw SDK server {figures['raw_calls_per_cpu_s']} calls (ratio "
            f"{figures['runtime_turns_per_cpu_s'] / figures['raw_calls_per_cpu_s']:.2f})"
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
