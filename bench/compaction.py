#!/usr/bin/env python3
"""The cost of compaction per turn: one long thread with compaction happening, next to
the same thread under its budget and with no budget at all (same run, interleaved).

The workload: ``--turns`` chat turns, one after another on one thread (each submitted
when the one before was delivered), each an agent turn with the runtime composed as
``toolang init`` composes it (every installed plugin, the starter ``toolang.toml``,
memory off). Each input is about ``--words`` words. The model is an instant scripted
function at the model boundary: it answers in a few words, and as the summariser keeps
one line per folded turn (its first five words), so the summary grows with the thread
until it is cut to fit.

Variants (a turn's cost grows with the history its prompt carries, so the three differ
in that too: ``under`` carries the whole thread, ``off`` 20 turns, ``compacting`` what
the budget leaves):

- ``off``: no ``context_tokens`` (the history is the last 20 turns): the baseline;
- ``under``: ``context_tokens`` so large the thread never outgrows it (counting only);
- ``compacting``: ``context_tokens = --budget``, so older turns are compacted every few
  turns.

The figures are the time of the ``compaction`` steps themselves (each step's own
start to finish, the summariser answering at once), per compaction and spread over every
turn; the runtime's CPU time per turn (the process's, every thread, less a
start and a stop's) and the wall time per turn, medians over ``--repeat`` runs; and,
for ``compacting``, the compactions made and the tokens the summariser was sent and
answered per turn (estimated) next to the agent's prompt tokens per turn — the model's
share of the cost, which with a real model is most of it: the runtime's is what the
CPU figure shows.

    python3 bench/compaction.py [--turns 300] [--budget 2000] [--words 60] [--repeat 3]

The last line is a JSON object with the figures.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ScriptedWorkload, compose, memory_off, started, starter_text

from toolang_core.logs import configure_logging
from toolang_core.models.types import ModelRequest, ModelResponse
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.turn.compaction import INSTRUCTION, SUMMARY_KIND
from toolang_core.turn.tokens import TokenCounter

SUMMARISER = INSTRUCTION.split("{", 1)[0]
COUNTER = TokenCounter(object())  # the estimate: the bench's model has no tokenizer
SETTINGS = """
[models]
default = "scripted"

[runtime]
sources = []
shutdown_grace_seconds = 0

[agents]
default = "assistant"
"""


class Workload(ScriptedWorkload):
    """The bench's plugin: the scripted model (registered, and delivered to, by
    ScriptedWorkload)."""

    def __init__(self) -> None:
        super().__init__()
        self.agent_calls = 0
        self.agent_tokens = 0
        self.summary_calls = 0
        self.summary_in = 0
        self.summary_out = 0

    def complete(self, request: ModelRequest) -> ModelResponse:
        tokens = COUNTER.messages(request.messages)
        if request.messages[0].content.startswith(SUMMARISER):
            text = request.messages[-1].content
            old, _, added = text.partition("\n\nConversation to add, oldest first:\n")
            kept = [line for line in old.splitlines()[1:] if line.startswith("- ")]
            kept += [
                "- " + " ".join(line.split()[1:6])
                for line in added.splitlines()
                if line.startswith("user: ")
            ]
            answer = "\n".join(kept)
            self.summary_calls += 1
            self.summary_in += tokens
            self.summary_out += COUNTER.text(answer)
            return ModelResponse(text=answer)
        self.agent_calls += 1
        self.agent_tokens += tokens
        return ModelResponse(text="noted, " + request.messages[-1].content.split(":", 1)[0])


def build(home: Path, budget: int | None) -> tuple[Runtime, Workload]:
    def edit(text: str) -> str:
        # no HTTP server: the bench measures turns, and other runs may hold its port
        return memory_off(text).replace("disable = []", 'disable = ["server"]', 1)

    text = starter_text(edit) + SETTINGS  # the bench's sections replace the starter's
    if budget is not None:
        text += f"context_tokens = {budget}\n"
    workload = Workload()
    return compose(home, text, workload), workload


def said(number: int, words: int) -> str:
    return f"turn {number}: " + " ".join(f"word{number}w{k}" for k in range(words))


def cycle(home: Path, turns: int, words: int, budget: int | None) -> dict[str, Any]:
    runtime, workload = build(home, budget)
    inbox = runtime.open_inbox()

    async def run() -> float:
        stop = asyncio.Event()
        serving = await started(runtime, stop, freeze=False)
        loop = asyncio.get_running_loop()
        start = time.perf_counter()
        for n in range(turns):
            turn = inbox.submit(
                NewTurnRequest(source="chat", thread_id="chat:long", input=said(n, words))
            )
            waiter = loop.create_future()
            workload.waiters[turn.id] = waiter
            if turn.id not in workload.answers:
                await waiter
        elapsed = time.perf_counter() - start
        stop.set()
        await serving
        return elapsed

    cpu = time.process_time()
    wall = asyncio.run(run())
    cpu = time.process_time() - cpu
    assert len(workload.answers) == turns
    assert all(answer.startswith("noted, turn") for answer in workload.answers.values())
    store = inbox.store
    assert all(store.get(t).status is TurnStatus.COMPLETED for t in workload.answers)
    summary = store.get_record(SUMMARY_KIND, "chat:long")
    # the compaction steps' own time (building the summariser's prompt, the instant
    # model, masking, the record and the step written), each as its step records it
    spent = [
        step.finished_at - step.started_at
        for turn_id in workload.answers
        for step in store.steps(turn_id)
        if step.kind == "compaction"
    ]
    store.close()
    return {
        "cpu_ms_per_turn": 1000 * cpu / max(1, turns),
        "wall_ms_per_turn": 1000 * wall / max(1, turns),
        "compactions": workload.summary_calls,
        "compaction_step_ms_median": 1000 * statistics.median(spent) if spent else 0.0,
        "compaction_ms_per_turn": 1000 * sum(spent) / max(1, turns),
        "turns_in_summary": summary.data["turns"] if summary else 0,
        "agent_prompt_tokens_per_turn": workload.agent_tokens / max(1, turns),
        "summariser_tokens_in_per_turn": workload.summary_in / max(1, turns),
        "summariser_tokens_out_per_turn": workload.summary_out / max(1, turns),
    }


def main() -> None:
    configure_logging(level="error")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--words", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    variants = {"off": None, "under": 10_000_000, "compacting": args.budget}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as tmp:  # imports and first-use caches, unmeasured
        cycle(Path(tmp), 20, args.words, args.budget)
    for n in range(args.repeat):
        for name, budget in variants.items():
            with tempfile.TemporaryDirectory() as tmp:
                figures = cycle(Path(tmp), args.turns, args.words, budget)
            with tempfile.TemporaryDirectory() as tmp:  # less a start and a stop's CPU
                fixed = cycle(Path(tmp), 0, args.words, budget)
            figures["cpu_ms_per_turn"] -= fixed["cpu_ms_per_turn"] / max(1, args.turns)
            runs[name].append(figures)
            print(
                f"run {n + 1} {name:10}: {figures['cpu_ms_per_turn']:.3f} ms CPU/turn   "
                f"{figures['wall_ms_per_turn']:.3f} ms/turn   "
                f"{figures['compactions']} compaction(s), "
                f"prompt {figures['agent_prompt_tokens_per_turn']:.0f} tokens/turn"
            )

    def median(name: str, key: str) -> float:
        return round(statistics.median(r[key] for r in runs[name]), 4)

    result: dict[str, Any] = {"turns": args.turns, "budget": args.budget, "repeat": args.repeat}
    for name in variants:
        for key in runs[name][0]:
            result[f"{name}_{key}_median"] = median(name, key)
    under = result["under_cpu_ms_per_turn_median"]
    result["compacting_over_under_cpu"] = round(
        result["compacting_cpu_ms_per_turn_median"] / under - 1, 4
    )
    result["under_over_off_cpu"] = round(under / result["off_cpu_ms_per_turn_median"] - 1, 4)
    print(
        f"median CPU per turn: off {result['off_cpu_ms_per_turn_median']:.3f} ms, under budget "
        f"{under:.3f} ms ({result['under_over_off_cpu']:+.1%}), compacting "
        f"{result['compacting_cpu_ms_per_turn_median']:.3f} ms "
        f"({result['compacting_over_under_cpu']:+.1%} against under budget; "
        f"{result['compacting_compactions_median']:.0f} compactions in {args.turns} turns, "
        f"{result['compacting_compaction_step_ms_median_median']:.3f} ms each, "
        f"{result['compacting_compaction_ms_per_turn_median']:.3f} ms per turn); "
        "summariser tokens per turn: "
        f"{result['compacting_summariser_tokens_in_per_turn_median']:.0f} in, "
        f"{result['compacting_summariser_tokens_out_per_turn_median']:.0f} out, against "
        f"{result['compacting_agent_prompt_tokens_per_turn_median']:.0f} in the agent's prompt"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
