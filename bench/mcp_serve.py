#!/usr/bin/env python3
"""Calls/s through toolang's MCP endpoint: ``--sessions`` concurrent MCP client
sessions (the ``mcp`` SDK's own streamable-HTTP client) against a real `toolang run`
serving ``/api/mcp``, the demo model answering. Each call is a durable chat turn
(stored before it answers, followed to its end); every turn is checked in the store
afterwards.

    python3 bench/mcp_serve.py [--sessions 20] [--calls 10]

Goal (#34): >= 200 turns/s with 20 sessions. The last line is a JSON object with the
figures.
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

ROOT = Path(__file__).resolve().parent.parent
# This script's own directory comes first on sys.path, and bench/mcp.py there would
# shadow the `mcp` SDK: drop it.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT / "plugins" / "toolang-source-mcp" / "tests"))

from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402
from mcp_kit import ALICE, Home, install_kit  # noqa: E402

from toolang_core import TurnFilter  # noqa: E402
from toolang_core.store.sqlite import SQLiteStore  # noqa: E402


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


async def measure(url: str, sessions: int, calls: int) -> dict[str, float]:
    latencies: list[float] = []
    # one warm-up call: the endpoint builds its MCP server on first use
    await one_session(url, -1, 1, [])
    started = time.perf_counter()
    done = await asyncio.gather(*(one_session(url, n, calls, latencies) for n in range(sessions)))
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "turns": sum(done),
        "seconds": round(elapsed, 3),
        "turns_per_s": round(sum(done) / elapsed, 1),
        "p50_ms": round(statistics.median(latencies) * 1000, 1),
        "p95_ms": round(latencies[int(len(latencies) * 0.95) - 1] * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--calls", type=int, default=10, help="calls per session")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        install_kit(base / "site")
        home = Home(base / "home", base / "site")
        config = home.home / "toolang.toml"
        config.write_text(config.read_text().replace('"echo"', '"demo"'), encoding="utf-8")
        home.env["TOOLANG_LOAD_PLUGINS"] = "source-mcp,model-demo,source-chat,server"
        home.start()
        try:
            figures = asyncio.run(measure(home.url + "/api/mcp", args.sessions, args.calls))
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
    print(
        f"{figures['turns']} MCP calls over {args.sessions} sessions in {figures['seconds']} s: "
        f"{figures['turns_per_s']} turns/s (goal >= 200); per call p50 {figures['p50_ms']} ms, "
        f"p95 {figures['p95_ms']} ms; {completed} turns completed in the store"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
