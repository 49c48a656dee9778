#!/usr/bin/env python3
"""A2A between two toolang runtimes on loopback, each a real `toolang run` process with
its own store, and an instant model at the model boundary.

1. **Remote ask_agent round trip**: runtime A's agent calls ``ask_agent`` on runtime B's
   agent (over A2A: SendMessage, B's turn, GetTask) next to the same ``ask_agent`` on a
   local agent of A, in the same run. The figure is the ``ask_agent`` tool call's own
   duration as A's trace records it (``duration_ms`` of the tool step), so A's queueing
   is left out; the whole A turn (submit → completed) is reported too.
2. **Inbound durable throughput**: ``--messages`` SendMessage requests (non-blocking)
   to B over ``--concurrency`` kept-alive connections, each sending its share one after
   another; each is answered only after its turn request is stored ``queued``. Figure:
   messages / (first send → last answer); every answer is checked, and every message
   is looked up in B's store afterwards. The client is plain HTTP/1.1 on asyncio
   streams in this process: it shares the two cores with B, so it must cost little
   (httpx's async client took about 1.7 ms of CPU per message, more than B). Its CPU
   per message is printed, and B's over the same time (B runs the messages' turns
   meanwhile: its figure holds part of their cost).

    python3 bench/a2a.py [--asks 60] [--messages 600] [--concurrency 32]

Goals (#19): remote p50 round trip < 25 ms on loopback; inbound >= 300 messages/s
durable; (#38) inbound >= 800 messages/s. The last line is a JSON object with the
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
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "plugins" / "toolang-source-a2a" / "tests"))

from _http import read_response  # noqa: E402
from _proc import cpu_seconds  # noqa: E402
from a2a_kit import Runtime, install_kit  # noqa: E402

from toolang_core import NewTurnRequest, TurnFilter  # noqa: E402
from toolang_core.store.sqlite import SQLiteStore  # noqa: E402
from toolang_core.store.types import SubmitRules  # noqa: E402

B_CONFIG = """
[agents]
default = "reviewer"

[plugins.source-a2a]
listen = "127.0.0.1:{port}"
tokens = { peer-a = "bench-token" }
"""

HELPER = """---
name: helper
description: a local agent to compare with
model: echo
---
You help.
"""


def a_config(b: Runtime) -> str:
    endpoint = b.url + "/a2a/reviewer"
    return f"""
[plugins.agents-remote]
endpoints = ["{endpoint}"]
tokens = {{ "{endpoint}" = "bench-token" }}
poll_seconds = 0.005

[plugins.source-a2a]
listen = "127.0.0.1:{{port}}"
"""


def ask_round_trips(a: Runtime, agent: str, count: int) -> tuple[list[float], list[float]]:
    """(tool-call ms, whole-turn ms) of ``count`` asks, one after another."""
    store = SQLiteStore(a.home / ".toolang" / "toolang.db")
    tool_ms, turn_ms = [], []
    try:
        for i in range(count):
            started = time.perf_counter()
            turn_id = store.submit(
                NewTurnRequest(
                    source="chat",
                    thread_id=f"bench:{agent}:{i}",
                    input=f"delegate:ask_agent:{agent}:ping {i}",
                ),
                SubmitRules("chat", 10),
                now=time.time(),
            ).id
            while not (turn := store.get(turn_id)).status.is_terminal:
                time.sleep(0.0005)
            turn_ms.append((time.perf_counter() - started) * 1000)
            assert turn.status.value == "completed", turn.error
            assert f"echo: ping {i}" in (turn.output or ""), turn.output
            step = next(s for s in store.steps(turn_id) if s.kind == "tool_call")
            tool_ms.append(float(step.data["result"]["duration_ms"]))
    finally:
        store.close()
    return tool_ms, turn_ms


async def inbound(b: Runtime, messages: int, concurrency: int) -> dict[str, float]:
    """``messages`` SendMessage requests to B over ``concurrency`` kept-alive
    connections (each sends its share one after another), every answer checked; then
    every answered task must be in B's store. Returns messages/s, and the CPU seconds
    per message of this client (a plain HTTP/1.1 client on asyncio streams: it shares
    the two cores with B) and of B's process over the same time (B runs the messages'
    turns meanwhile, so its figure holds part of their cost too)."""
    assert b.process is not None, "B is not running"
    pid = b.process.pid
    host, port = b.url.removeprefix("http://").rsplit(":", 1)
    connections = [await asyncio.open_connection(host, int(port)) for _ in range(concurrency)]
    head = (
        b"POST /a2a/reviewer HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer bench-token\r\nA2A-Version: 1.0\r\nContent-Length: " % host.encode()
    )

    async def sender(index: int) -> list[str]:
        reader, writer = connections[index]
        ids = []
        for i in range(index, messages, concurrency):
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "SendMessage",
                    "params": {
                        "message": {
                            "messageId": f"bench-{i}",
                            "contextId": f"bench-{i % 50}",
                            "role": "ROLE_USER",
                            "parts": [{"text": f"inbound {i}"}],
                        },
                        "configuration": {"returnImmediately": True},
                    },
                }
            ).encode()
            writer.write(b"%s%d\r\n\r\n%s" % (head, len(body), body))
            status, answer = await read_response(reader)
            result = answer.get("result")
            if status != 200 or not isinstance(result, dict):
                raise RuntimeError(f"message {i} was refused: {status} {answer}")
            ids.append(str(result["task"]["id"]))
        writer.close()
        return ids

    b_cpu, cpu = cpu_seconds(pid), time.process_time()
    started = time.perf_counter()
    sent = await asyncio.gather(*(sender(n) for n in range(concurrency)))
    elapsed = time.perf_counter() - started
    cpu, b_cpu = time.process_time() - cpu, (cpu_seconds(pid) or 0.0) - (b_cpu or 0.0)
    ids = [i for share in sent for i in share]
    store = SQLiteStore(b.home / ".toolang" / "toolang.db")
    try:
        stored = {t.id for t in store.list_turns(TurnFilter(limit=messages * 2 + 100))}
    finally:
        store.close()
    missing = set(ids) - stored
    assert len(ids) == messages, f"{len(ids)} answers for {messages} messages"
    assert not missing, f"{len(missing)} answered messages are not in B's store"
    return {
        "rate": messages / elapsed,
        "client_cpu_ms": 1000 * cpu / messages,
        "server_cpu_ms": 1000 * b_cpu / messages,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=60)
    parser.add_argument("--messages", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        install_kit(root / "site")
        b = Runtime(root / "b", root / "site", B_CONFIG).start()
        a = Runtime(
            root / "a",
            root / "site",
            a_config(b),
            plugins="agents-remote,agents-user,source-a2a,echo-model,source-chat",
        )
        (a.home / "agents" / "helper").mkdir(parents=True)
        (a.home / "agents" / "helper" / "AGENT.md").write_text(HELPER, encoding="utf-8")
        try:
            a.start()
            ask_round_trips(a, "reviewer", 5)  # warm up both paths
            ask_round_trips(a, "helper", 5)
            remote_tool, remote_turn = ask_round_trips(a, "reviewer", args.asks)
            local_tool, local_turn = ask_round_trips(a, "helper", args.asks)
            sent = asyncio.run(inbound(b, args.messages, args.concurrency))
        finally:
            a.stop()
            b.stop()

    def p50(xs: list[float]) -> float:
        return round(statistics.median(xs), 2)

    def p95(xs: list[float]) -> float:
        return round(sorted(xs)[int(len(xs) * 0.95) - 1], 2)

    figures = {
        "remote_ask_p50_ms": p50(remote_tool),
        "remote_ask_p95_ms": p95(remote_tool),
        "local_ask_p50_ms": p50(local_tool),
        "remote_to_local_ratio": round(p50(remote_tool) / max(p50(local_tool), 0.001), 1),
        "remote_turn_p50_ms": p50(remote_turn),
        "local_turn_p50_ms": p50(local_turn),
        "inbound_messages_per_s": round(sent["rate"], 1),
        "inbound_client_cpu_ms_per_message": round(sent["client_cpu_ms"], 3),
        "inbound_b_cpu_ms_per_message": round(sent["server_cpu_ms"], 3),
        "asks": args.asks,
        "messages": args.messages,
        "goal_remote_p50_ms": 25,
        "goal_inbound_per_s": 300,
        "goal_inbound_per_s_38": 800,
    }
    print(
        f"remote ask_agent p50 {figures['remote_ask_p50_ms']} ms "
        f"(p95 {figures['remote_ask_p95_ms']}), local {figures['local_ask_p50_ms']} ms, "
        f"ratio {figures['remote_to_local_ratio']}x"
    )
    print(
        f"inbound SendMessage (durable) {figures['inbound_messages_per_s']} messages/s "
        f"(goal >= 800); CPU per message: this client "
        f"{figures['inbound_client_cpu_ms_per_message']} ms, B "
        f"{figures['inbound_b_cpu_ms_per_message']} ms (its turns run meanwhile)"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
