#!/usr/bin/env python3
"""What the effect contract costs a tool call in the store (SQLite, same run).

A tool call used to be stored once, after it ran (one fenced ``record_step`` insert).
Under the effect contract it is stored as an intent before it runs (the same insert)
and completed with its result in place after (``complete_step``, one fenced update of
that row). Both are measured on a real SQLite file with the runtime's settings (WAL,
``synchronous = normal``), for turns of ``--calls-per-turn`` calls each, and reported
in µs per tool call with their ratio.

    python3 bench/tool_effects.py [--turns 300] [--calls-per-turn 5] [--repeat 5]

The last line is a JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import NewTurnRequest, StepRecord, SubmitRules

RUN = "bench-run"
DATA = {
    "call": {"id": "c1", "name": "echo_len", "params": {"text": "hello world"}},
    "agent": "assistant",
}
RESULT = {
    **DATA,
    "result": {"ok": True, "output": {"text": "hello world", "length": 11}},
    "chain": [{"stage": "execute", "verdict": "ok", "plugin": None, "detail": ""}],
}


def claimed_turns(store: SQLiteStore, count: int) -> list[str]:
    now = time.time()
    ids = [
        store.submit(
            NewTurnRequest(source="chat", thread_id=f"chat:{n}", input="hi"),
            SubmitRules("chat", 10),
            now=now,
        ).id
        for n in range(count)
    ]
    store.claim(run_id=RUN, limit=count, now=now, lease_seconds=600, caps={})
    return ids


def step(turn_id: str, key: str, status: str, data: dict[str, object]) -> StepRecord:
    now = time.time()
    return StepRecord(turn_id, 0, 1, "tool_call", status, now, now, data, None, key)  # type: ignore[arg-type]


def once_after(store: SQLiteStore, turn_ids: list[str], calls: int) -> float:
    started = time.perf_counter()
    for turn_id in turn_ids:
        for n in range(calls):
            store.record_step(step(turn_id, f"{turn_id}:a{n}", "completed", RESULT), run_id=RUN)
    return time.perf_counter() - started


def intent_then_result(store: SQLiteStore, turn_ids: list[str], calls: int) -> float:
    started = time.perf_counter()
    for turn_id in turn_ids:
        for n in range(calls):
            intent = store.record_step(step(turn_id, f"{turn_id}:b{n}", "intent", DATA), run_id=RUN)
            assert intent is not None
            done = store.complete_step(
                StepRecord(
                    turn_id, intent.seq, 1, "tool_call", "completed", intent.started_at,
                    time.time(), RESULT, None, intent.idempotency_key,
                ),
                run_id=RUN,
            )  # fmt: skip
            assert done is not None
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--calls-per-turn", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    calls = args.turns * args.calls_per_turn
    before, after = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.repeat):  # alternate, so drift hits both alike
            store = SQLiteStore(Path(tmp) / f"r{round_}.db")
            ids = claimed_turns(store, args.turns)
            before.append(once_after(store, ids, args.calls_per_turn) / calls * 1e6)
            after.append(intent_then_result(store, ids, args.calls_per_turn) / calls * 1e6)
            store.close()
    figures = {
        "once_after_us": round(statistics.median(before), 1),
        "intent_and_result_us": round(statistics.median(after), 1),
    }
    figures["ratio"] = round(figures["intent_and_result_us"] / figures["once_after_us"], 2)
    print(
        f"one step after the call     {figures['once_after_us']:8.1f} µs per tool call\n"
        f"intent before + result after {figures['intent_and_result_us']:7.1f} µs per tool call "
        f"(x{figures['ratio']})"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
