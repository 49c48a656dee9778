"""What toolang-client adds to a call over raw httpx: p50 of the same requests, sent
once with httpx (``post(...).json()``) and once through the client (typed result,
idempotency key, retry policy), against an in-process transport that answers a stored
turn at once — so the figure is the client's own cost, not the network's or the
server's (bench/server.py measures those).

    python bench/client.py [--calls 3000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

import httpx

from toolang_client import Client

TURN = {
    "id": "t1", "seq": 1, "source": "chat", "thread_id": "http:local", "thread_group": "chat",
    "priority": 100, "input": "hi", "status": "completed", "attempt": 1, "created_at": 1.0,
    "updated_at": 2.0, "sender": "http", "channel": "http", "agent": None,
    "dedupe_key": None, "not_before": None, "parent": None, "owner": None,
    "timeout_seconds": None, "meta": {}, "started_at": 1.0, "finished_at": 2.0,
    "cancel_requested": False, "output": "echo: hi", "outcome": None, "error": None,
}  # fmt: skip
BODY = json.dumps(TURN).encode()


def answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, content=BODY, headers={"content-type": "application/json"})


def p50_ms(call: Callable[[], object], calls: int) -> float:
    for _ in range(min(200, calls)):  # warm up
        call()
    took = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        took.append(time.perf_counter() - start)
    return statistics.median(took) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    calls = parser.parse_args().calls
    transport = httpx.MockTransport(answer)
    raw = httpx.Client(base_url="http://bench", transport=transport)
    client = Client("http://bench", http=httpx.Client(base_url="http://bench", transport=transport))
    rows = [
        (
            "submit (wait)",
            lambda: raw.post("/api/turns", json={"input": "hi", "wait": 30}).json(),
            lambda: client.submit("hi", wait=30),
        ),
        ("get a turn", lambda: raw.get("/api/turns/t1").json(), lambda: client.turn("t1")),
    ]
    for name, by_httpx, by_client in rows:
        base, typed = p50_ms(by_httpx, calls), p50_ms(by_client, calls)
        print(
            f"{name}: raw httpx p50 {base:.3f} ms, toolang-client p50 {typed:.3f} ms, "
            f"added {typed - base:.3f} ms (goal < 0.5 ms)"
        )


if __name__ == "__main__":
    main()
