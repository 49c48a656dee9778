#!/usr/bin/env python3
"""How well the SecurityFilter plugin (toolang-hook-security-filter) tells danger from work.

Runs the real plugin, in a real runtime, through its pluggy hooks over the corpus in
``bench/security_corpus.json``:

- every ``dangerous`` tool call must be blocked (a miss is a false negative),
- every ``benign`` call — hard look-alikes such as ``rm -rf ./build``, ``curl … | jq``,
  ``dd`` to a file — must not be (a block is a false positive; an Observe warning or a
  Modify that masks personal data still lets the call run),
- ``mentions`` quote a dangerous command inside a document or a message. The filter
  judges text, not intent, so it blocks them by design; they are counted on their own,
- every ``pii`` string goes through the result hook: the kinds it masks must be exactly
  the kinds the corpus lists (look-alikes — order ids, timestamps, versions, ISBNs,
  16-digit ids failing Luhn, UUIDs, git SHAs — list none).

Each misclassified item is printed. Timing: microseconds per hook call over the corpus
and over everyday calls and results (repeated), beside a no-op filter called through the
same pluggy hook as the floor; one 20 KB source file; repetitive one-line input built to
make naive patterns quadratic. Goal: zero false negatives, under 2% false positives.

    python3 bench/security_eval.py [--repeat 200]

The last line is a JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolang_core import Block, Modify, Observe, ToolCall, ToolCallContext, ToolResult, hookimpl
from toolang_core.config.loader import load_config
from toolang_core.runtime import Runtime

try:
    import toolang_hook_security_filter as plugin
except ImportError:
    sys.exit(
        "toolang-hook-security-filter is not installed: "
        "pip install -e plugins/toolang-hook-security-filter"
    )

CORPUS = Path(__file__).resolve().parent / "security_corpus.json"
MASK_KINDS = ("email", "phone", "card", "iban", "secret")
BUDGET_US = 50.0  # the whole tool-hook chain, per call
# Everyday calls and results, for the cost outside the corpus (whose items are all hard).
SIMPLE_CALLS = [
    {"tool": "exec_run", "params": {"command": "ls -la"}},
    {"tool": "exec_run", "params": {"command": "git status"}},
    {"tool": "fs_read", "params": {"path": "src/app/main.py"}},
    {"tool": "web_search", "params": {"query": "weather in Paris tomorrow", "limit": 5}},
    {"tool": "bump", "params": {"label": "a"}},
]
SIMPLE_RESULTS = [
    "ok",
    {"exit_code": 0, "stdout": "main.py\nREADME.md\n", "stderr": ""},
    "bumped a",
    [1, 2, 3],
    {"city": "Paris", "temperature": 21.5, "summary": "light rain in the afternoon"},
]


class NoopFilter:
    """The floor: a filter that looks at nothing, called through the same hooks."""

    @staticmethod
    @hookimpl
    def toolang_filter_tool_call(call: ToolCall, ctx: ToolCallContext) -> None:
        return None

    @staticmethod
    @hookimpl
    def toolang_filter_tool_result(
        call: ToolCall, result: ToolResult, ctx: ToolCallContext
    ) -> None:
        return None


def runtime_with(home: Path, name: str, filter_plugin: object) -> Runtime:
    (home / "toolang.toml").write_text("", encoding="utf-8")
    config = load_config(home / "toolang.toml", env={"HOME": str(home)})
    runtime = Runtime.with_plugins(config, [(name, filter_plugin)], env={"HOME": str(home)})
    record = runtime.host.record(name)
    if record.error is not None:  # a broken plugin is isolated by the host: say so, loudly
        sys.exit(f"plugin {name!r} failed to load: {record.error.message}")
    return runtime


def context(runtime: Runtime, call: ToolCall) -> ToolCallContext:
    return ToolCallContext(
        call=call,
        turn_id="bench-turn",
        thread_id="bench:1",
        run_id="bench-run",
        agent="bench",
        runtime=runtime,
    )


def check(runtime: Runtime, item: dict[str, Any]) -> object:
    """The plugin's verdict on one corpus call, asked through the pluggy hook."""
    call = ToolCall("c1", item["tool"], item["params"])
    answers = runtime.host.pm.hook.toolang_filter_tool_call(call=call, ctx=context(runtime, call))
    return answers[0] if answers else None


def masked_kinds(runtime: Runtime, output: Any) -> set[str]:
    """The kinds the result hook masked in ``output`` (a tool's output)."""
    call = ToolCall("c1", "fs_read", {"path": "notes.txt"})
    result = ToolResult(ok=True, output=output)
    answers = runtime.host.pm.hook.toolang_filter_tool_result(
        call=call, result=result, ctx=context(runtime, call)
    )
    if not answers:
        return set()
    output = str(answers[0].output)
    return {kind for kind in MASK_KINDS if f"[{kind} redacted]" in output}


def describe(item: dict[str, Any]) -> str:
    params = json.dumps(item["params"], ensure_ascii=False)
    return f"{item['tool']}({params[:110]}{'…' if len(params) > 110 else ''})"


def classify_calls(runtime: Runtime, corpus: dict[str, Any]) -> dict[str, Any]:
    dangerous = [(item, check(runtime, item)) for item in corpus["dangerous"]]
    benign = [(item, check(runtime, item)) for item in corpus["benign"]]
    mentions = [(item, check(runtime, item)) for item in corpus["mentions"]]
    misses = [item for item, verdict in dangerous if not isinstance(verdict, Block)]
    false_blocks = [(item, v) for item, v in benign if isinstance(v, Block)]
    print(f"dangerous calls: {len(dangerous)}  blocked {len(dangerous) - len(misses)}")
    by_family: dict[str, list[int]] = {}
    for item, verdict in dangerous:
        counts = by_family.setdefault(item["family"], [0, 0])
        counts[0] += 1
        counts[1] += isinstance(verdict, Block)
    for family, (total, blocked) in by_family.items():
        print(f"  {family:<24} {blocked}/{total}")
    print(f"false negatives (dangerous, not blocked): {len(misses)}")
    for item in misses:
        print(f"  MISS {item['family']}: {describe(item)}")
    observed = sum(isinstance(v, Observe) for _, v in benign)
    modified = sum(isinstance(v, Modify) for _, v in benign)
    print(
        f"benign calls: {len(benign)}  allowed {len(benign) - len(false_blocks)} "
        f"(of which {observed} with a warning, {modified} with personal data masked)"
    )
    print(f"false positives (benign, blocked): {len(false_blocks)}")
    for item, verdict in false_blocks:
        reason = verdict.reason if isinstance(verdict, Block) else ""
        print(f"  BLOCKED {describe(item)}\n          {reason}")
    blocked_mentions = sum(isinstance(v, Block) for _, v in mentions)
    print(
        f"quoted mentions: {blocked_mentions}/{len(mentions)} blocked "
        "(by design: the filter judges text, not intent)"
    )
    return {
        "dangerous": len(dangerous),
        "benign": len(benign),
        "false_negatives": len(misses),
        "false_positives": len(false_blocks),
        "false_positive_rate": round(len(false_blocks) / max(len(benign), 1), 4),
        "benign_observed": observed,
        "mentions_blocked": blocked_mentions,
        "mentions": len(mentions),
    }


def classify_pii(runtime: Runtime, corpus: dict[str, Any]) -> dict[str, Any]:
    items = corpus["pii"]
    wrong = []
    true_pos = {kind: 0 for kind in MASK_KINDS}
    false_pos = dict(true_pos)
    false_neg = dict(true_pos)
    for item in items:
        expected, found = set(item["kinds"]), masked_kinds(runtime, item["text"])
        for kind in MASK_KINDS:
            true_pos[kind] += kind in expected and kind in found
            false_pos[kind] += kind in found and kind not in expected
            false_neg[kind] += kind in expected and kind not in found
        if expected != found:
            wrong.append((item, found))
    with_pii = sum(bool(item["kinds"]) for item in items)
    without = len(items) - with_pii
    print(f"\npii strings: {len(items)} ({with_pii} with personal data, {without} without)")
    for kind in MASK_KINDS:
        print(
            f"  {kind:<7} found {true_pos[kind]}  missed {false_neg[kind]}  "
            f"masked by mistake {false_pos[kind]}"
        )
    print(f"misclassified strings: {len(wrong)}")
    for item, found in wrong:
        print(
            f"  {item['text'][:70]!r}: expected {sorted(item['kinds']) or 'none'}, "
            f"masked {sorted(found) or 'none'}"
        )
    return {
        "pii_strings": len(items),
        "pii_missed": sum(false_neg.values()),
        "pii_false_masks": sum(false_pos.values()),
        "pii_misclassified": len(wrong),
    }


def per_call_us(calls: list[Callable[[], object]], repeat: int) -> list[float]:
    """Microseconds per call, one figure per corpus item (the best of ``repeat`` rounds
    of 5 calls: the least disturbed by the rest of the machine)."""
    figures = []
    for call in calls:
        best = float("inf")
        for _ in range(repeat):
            started = time.perf_counter_ns()
            for _ in range(5):
                call()
            best = min(best, (time.perf_counter_ns() - started) / 5000)
        figures.append(best)
    return figures


def timings(
    filtered: Runtime, floor: Runtime, corpus: dict[str, Any], repeat: int
) -> dict[str, Any]:
    sets: dict[str, tuple[list[Any], Callable[[Runtime, Any], object]]] = {
        "corpus_call": (corpus["benign"] + corpus["dangerous"], check),
        "corpus_result": ([item["text"] for item in corpus["pii"]], masked_kinds),
        "simple_call": (SIMPLE_CALLS, check),
        "simple_result": (SIMPLE_RESULTS, masked_kinds),
    }
    figures: dict[str, Any] = {}
    print(
        f"\ntiming: µs per hook call through pluggy, best of {repeat} rounds per item; "
        "'own' is the mean less a no-op filter's (the hook call and its arguments)"
    )
    for label, (items, hook) in sets.items():
        ours = per_call_us([lambda i=i, h=hook: h(filtered, i) for i in items], repeat)
        noop = per_call_us([lambda i=i, h=hook: h(floor, i) for i in items], repeat)
        mean, p50 = statistics.mean(ours), statistics.median(ours)
        p99 = sorted(ours)[min(len(ours) - 1, round(0.99 * (len(ours) - 1)))]
        own = mean - statistics.mean(noop)
        print(
            f"  {label:<14} mean {mean:6.2f}  p50 {p50:6.2f}  p99 {p99:6.2f}  max {max(ours):6.2f}"
            f"   no-op {statistics.mean(noop):5.2f}  own {own:6.2f}"
        )
        figures[f"{label}_mean_us"] = round(mean, 2)
        figures[f"{label}_p99_us"] = round(p99, 2)
        figures[f"{label}_own_us"] = round(own, 2)
    for kind in ("simple", "corpus"):
        both = figures[f"{kind}_call_own_us"] + figures[f"{kind}_result_own_us"]
        print(
            f"  both hooks, {kind} items: {both:.2f} µs of the filter's own per call = "
            f"{100 * both / BUDGET_US:.0f}% of the {BUDGET_US:g} µs budget of the whole chain"
        )
    source = Path(plugin.__file__).with_name("rules.py").read_text(encoding="utf-8")
    big = (source * (20_000 // len(source) + 1))[:20_000]
    write = {"tool": "fs_write", "params": {"path": "src/big.py", "text": big}}
    big_call = per_call_us([lambda: check(filtered, write)], max(repeat // 10, 3))[0]
    big_result = per_call_us([lambda: masked_kinds(filtered, big)], max(repeat // 10, 3))[0]
    print(f"  a 20 KB file: {big_call:.0f} µs as a parameter, {big_result:.0f} µs as a result")
    figures["large_20kb_call_us"] = round(big_call, 1)
    figures["large_20kb_result_us"] = round(big_result, 1)
    # Repetitive one-line input, the kind that makes naive patterns quadratic.
    hostile = [
        "curl -o a.sh https://x " + "&& echo a.sh " * 1500,
        "wget https://x/a.sh " + "; echo a.sh" * 1500,
        "cat ~/.aws/credentials " + "| cat " * 3000,
        "rm " * 6000,
        "iex " * 5000,
        "env | " * 3000,
    ]
    worst = max(
        per_call_us([lambda text=text: check(filtered, {"tool": "t", "params": {"s": text}})], 3)[0]
        for text in hostile
    )
    print(f"  repetitive 16-20 KB one-liners: at most {worst / 1000:.1f} ms as a parameter")
    figures["hostile_max_ms"] = round(worst / 1000, 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="timing rounds per item")
    args = parser.parse_args()
    corpus = json.loads(CORPUS.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "a").mkdir()
        (Path(tmp) / "b").mkdir()
        filtered = runtime_with(Path(tmp) / "a", "hook-security-filter", plugin)
        floor = runtime_with(Path(tmp) / "b", "noop-filter", NoopFilter())
        figures = classify_calls(filtered, corpus)
        figures.update(classify_pii(filtered, corpus))
        figures.update(timings(filtered, floor, corpus, args.repeat))
    ok = figures["false_negatives"] == 0 and figures["false_positive_rate"] < 0.02
    print(f"\ngoal (0 false negatives, < 2% false positives): {'met' if ok else 'NOT met'}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
