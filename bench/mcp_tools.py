#!/usr/bin/env python3
"""Overhead of an MCP tool call over a local stdio server, next to the same function as a
native toolang tool (same run, same process).

The server is plugins/toolang-tools-mcp/tests/servers/files_server.py (the SDK's
MCPServer, formerly FastMCP), started through toolang-tools-mcp exactly as a runtime
starts it; its ``read_note`` is also defined here as a native async tool. Both are
called through their registered ``Tool.function`` with a real ``ToolCallContext`` (the
hook chain in front is the same for both and left out: bench/tool_chain.py measures it).
The session is opened before timing (one per server per runtime).

Each figure is the median of ``--batches`` batch medians of ``--calls`` calls (ms per
call). Goal: MCP p50 - native p50 < 2 ms. The SDK's own ``client.call_tool`` on the
same session is timed too, to tell the plugin's share from the SDK's and the server's;
and the raw limit, in the same batches: the SDK's bare stdio round trip, ``mcp.Client``
over the SDK's own ``stdio_client`` to the same server started without toolang (no
sandbox, no toolang pipes). The ratio printed is the MCP tool call's p50 over that raw
round trip's.

    python3 bench/mcp_tools.py [--calls 200] [--batches 5]

The last line is a JSON object with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _proc import cpu_seconds as process_cpu

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "plugins" / "toolang-tools-mcp" / "tests" / "servers" / "files_server.py"


async def read_note(name: str) -> str:
    """The native twin of the server's tool."""
    return f"note {name}: hello"


def descendants(pid: int) -> list[int]:
    """The processes under ``pid`` (Linux; ``[]`` elsewhere)."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split():
                found += [int(child), *descendants(int(child))]
    except OSError:
        pass
    return found


def cpu_seconds(pids: list[int]) -> float:
    """CPU time (user + system) the processes ``pids`` used so far (those gone: 0)."""
    return sum(process_cpu(pid) or 0.0 for pid in pids)


class Cpu:
    """CPU ms per call of this process (the client side) and of ``servers``, summed
    over the batches; unlike the latencies, the machine's load hardly moves them."""

    def __init__(self, servers: list[int]) -> None:
        self.servers = servers
        self.client = self.server = 0.0
        self.calls = 0

    async def timed(self, call: object, calls: int) -> list[float]:
        client, server = time.process_time(), cpu_seconds(self.servers)
        took = await timed(call, calls)
        self.client += time.process_time() - client
        self.server += cpu_seconds(self.servers) - server
        self.calls += calls
        return took

    def per_call(self) -> tuple[float, float]:
        return self.client / self.calls * 1000, self.server / self.calls * 1000


async def timed(call: object, calls: int) -> list[float]:
    took = []
    for number in range(calls):
        started = time.perf_counter()
        await call(number)  # type: ignore[operator]
        took.append((time.perf_counter() - started) * 1000)
    return took


async def measure(runtime: object, calls: int, batches: int) -> dict[str, float]:
    from toolang_core import Tool
    from toolang_core.testing.runtimes import tool_call_context
    from toolang_tools_mcp.catalog import checked_tools
    from toolang_tools_mcp.lifecycle import settings_of, stop_servers
    from toolang_tools_mcp.sessions import SessionPool

    # The tool as a serving run offers it (a run lists each server's tools as it starts).
    notes = settings_of(runtime).servers["notes"]  # type: ignore[arg-type]
    listed = checked_tools("notes", notes, runtime.config)  # type: ignore[attr-defined]
    mcp_tool = next(tool for tool in listed if tool.name == "notes_read_note")
    native = Tool.from_function(read_note, blocking=False)
    ctx = tool_call_context(runtime, "notes_read_note", {"name": "x"})  # type: ignore[arg-type]

    async def over_mcp(number: int) -> object:
        return await mcp_tool.function(context=ctx, name=f"n{number}")

    async def natively(number: int) -> object:
        return await native.function(name=f"n{number}")

    assert (await over_mcp(0))["text"] == "note n0: hello"  # opens the session
    pool = runtime.plugin_state("tools-mcp", SessionPool)  # type: ignore[attr-defined]
    client = await pool.sessions["notes"].client()

    async def sdk_alone(number: int) -> object:
        return await client.call_tool("read_note", {"name": f"n{number}"})

    from mcp import Client, StdioServerParameters

    sandboxed = descendants(os.getpid())  # toolang's server, in its sandbox
    bare_client = Client(StdioServerParameters(command=sys.executable, args=[str(SERVER)]))
    async with bare_client as bare:

        async def sdk_bare(number: int) -> object:
            return await bare.call_tool("read_note", {"name": f"n{number}"})

        assert (await sdk_bare(0)).content[0].text == "note n0: hello"  # type: ignore[union-attr]
        unsandboxed = [pid for pid in descendants(os.getpid()) if pid not in sandboxed]
        toolang_cpu, bare_cpu = Cpu(sandboxed), Cpu(unsandboxed)
        mcp_p50, native_p50, mcp_p95, sdk_p50, bare_p50 = [], [], [], [], []
        for _ in range(batches):
            over = await toolang_cpu.timed(over_mcp, calls)
            here = await timed(natively, calls)
            raw = await timed(sdk_alone, calls)
            bared = await bare_cpu.timed(sdk_bare, calls)
            mcp_p50.append(statistics.median(over))
            mcp_p95.append(statistics.quantiles(over, n=20)[18])
            native_p50.append(statistics.median(here))
            sdk_p50.append(statistics.median(raw))
            bare_p50.append(statistics.median(bared))
    await stop_servers(runtime)  # type: ignore[arg-type]
    return {
        "native_p50_ms": statistics.median(native_p50),
        "mcp_p50_ms": statistics.median(mcp_p50),
        "mcp_p95_ms": statistics.median(mcp_p95),
        "sdk_alone_p50_ms": statistics.median(sdk_p50),
        "sdk_bare_p50_ms": statistics.median(bare_p50),
        "mcp_client_cpu_ms": toolang_cpu.per_call()[0],
        "mcp_server_cpu_ms": toolang_cpu.per_call()[1],
        "bare_client_cpu_ms": bare_cpu.per_call()[0],
        "bare_server_cpu_ms": bare_cpu.per_call()[1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--batches", type=int, default=5)
    args = parser.parse_args()

    import toolang_tools_mcp
    from toolang_core.config.loader import load_config
    from toolang_core.logs import configure_logging
    from toolang_core.runtime import Runtime

    configure_logging(level="warning")
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "toolang.toml"
        config.write_text(
            "[plugins.tools-mcp.servers.notes]\n"
            f'command = "{sys.executable}"\nargs = ["{SERVER}"]\n'
        )
        os.environ["TOOLANG_CONFIG"] = str(config)
        runtime = Runtime.with_plugins(
            load_config(config), [("tools-mcp", toolang_tools_mcp)], env=dict(os.environ)
        )
        figures = asyncio.run(measure(runtime, args.calls, args.batches))
    added = figures["mcp_p50_ms"] - figures["native_p50_ms"]
    ratio = figures["mcp_p50_ms"] / max(figures["native_p50_ms"], 1e-9)
    to_raw = figures["mcp_p50_ms"] / max(figures["sdk_bare_p50_ms"], 1e-9)
    print(f"native tool call   p50 {figures['native_p50_ms']:.4f} ms")
    print(
        f"MCP (stdio) call   p50 {figures['mcp_p50_ms']:.3f} ms   "
        f"p95 {figures['mcp_p95_ms']:.3f} ms"
    )
    print(f"the SDK's own call p50 {figures['sdk_alone_p50_ms']:.3f} ms (same session, no toolang)")
    print(
        f"raw limit: the SDK's bare stdio round trip p50 {figures['sdk_bare_p50_ms']:.3f} ms "
        "(mcp.Client over stdio_client, the same server without toolang or sandbox)"
    )
    print(
        f"CPU per call, client (this process) + server: MCP tool "
        f"{figures['mcp_client_cpu_ms']:.3f} + {figures['mcp_server_cpu_ms']:.3f} ms, "
        f"bare SDK {figures['bare_client_cpu_ms']:.3f} + {figures['bare_server_cpu_ms']:.3f} ms "
        "(one after the other in a round trip: a floor under the latency)"
    )
    print(f"added by MCP       p50 {added:.3f} ms (goal < 2 ms)   ratio to native {ratio:.0f}x")
    print(f"ratio of the MCP tool call to the raw limit: {to_raw:.2f}")
    print(json.dumps({**figures, "added_p50_ms": added, "ratio": ratio, "ratio_to_raw": to_raw}))


if __name__ == "__main__":
    main()
