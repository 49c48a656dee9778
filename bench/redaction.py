#!/usr/bin/env python3
"""What the redaction policy costs an agent turn.

The steps one agent turn stores (prompt build, a model call asking for a tool, the
tool call with its chain, the answering model call — the shapes the agent loop
writes, with a ~1.6 KB instruction repeated in each model call and a user message
that differs per turn) are masked as ``TurnContext.record_step`` masks them: with the
core's rules alone, and with the SecurityFilter's detector installed (the default
when that plugin is). Beside them, the raw limit of visiting the same values without
looking at any string (a plain recursive copy).

    python3 bench/redaction.py [--turns 3000]

The last line is a JSON object (microseconds per turn).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolang_core import redaction

INSTRUCTION = "You are the operator. You run shell commands and manage files. " * 25


def turn_steps(i: int) -> list[dict[str, Any]]:
    user = f"please add {i} and 3 and tell me the result"
    call = {"id": f"c{i}", "name": "add", "params": {"a": i, "b": 3}}
    messages = [{"role": "system", "content": INSTRUCTION}, {"role": "user", "content": user}]
    answered = [
        *messages,
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": str(i + 3), "tool_call_id": call["id"]},
    ]
    stage = {"stage": "SecurityFilter", "verdict": "abstain", "plugin": "p", "detail": ""}
    return [
        {"agent": "operator", "model": "scripted", "tools": ["add"], "history_messages": 0,
         "memory": {"plugin": "sqlite", "request": {"agent_id": "operator", "query": user}},
         "memory_lines": 0, "degraded": False, "route": None},
        {"model": "scripted", "agent": "operator", "messages": messages, "truncated": False,
         "response": {"text": "", "tool_calls": [call], "usage": {"in": 10}, "model": "s"}},
        {"call": call, "result": {"ok": True, "output": i + 3, "error": None,
         "error_type": None, "duration_ms": 0.1}, "chain": [stage] * 5, "agent": "operator"},
        {"model": "scripted", "agent": "operator", "messages": answered, "truncated": False,
         "response": {"text": f"{i} + 3 = {i + 3}", "tool_calls": [], "usage": {"in": 10},
                      "model": "s"}},
    ]  # fmt: skip


def per_turn(turns: list[list[dict[str, Any]]], mask: Any) -> float:
    started = time.perf_counter()
    for steps in turns:
        for step in steps:
            mask(step)
    return (time.perf_counter() - started) / len(turns) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=3000)
    args = parser.parse_args()
    turns = [turn_steps(i) for i in range(args.turns)]
    figures = {"copy_only_us": per_turn(turns, copy.deepcopy)}
    redaction.use_detectors({})
    figures["core_rules_us"] = per_turn(turns, redaction.redact)
    try:
        from toolang_hook_security_filter.pii import Scrubber
    except ImportError:
        print("toolang-hook-security-filter is not installed: core rules only")
    else:
        scrubber = Scrubber()
        redaction.use_detectors({"pii": lambda text: scrubber.scrub_text(text, {})})
        figures["with_security_filter_us"] = per_turn(turns, redaction.redact)
    for name, value in figures.items():
        print(f"{name:>26}: {value:8.1f} us per turn ({value / figures['copy_only_us']:.2f}x copy)")
    print(json.dumps({k: round(v, 1) for k, v in figures.items()}))


if __name__ == "__main__":
    main()
