#!/usr/bin/env python3
"""How well the SecurityFilter plugin (toolang-hook-security-filter) tells danger from work.

Runs the real plugin, in a real runtime, through its pluggy hooks over every corpus in
bench/ — ``security_corpus.json`` (the developers'), ``security_blind.json``,
``security_heldout.json`` and ``security_blind2.json`` (written blind, before the filter
parsed commands; its "before" figures are in ``security_blind2_before.txt``):

- a ``dangerous`` call must never run unattended: the filter blocks it (``Block``) or
  sends it to a person (``AskApproval``). One that passes is a miss. The per-class table
  shows block / approve / pass for each class (``class``, ``family`` or ``category``),
- a ``benign`` call — hard look-alikes such as ``rm -rf ./build``, ``curl … | jq``,
  ``dd`` to a file — should pass: a block is a false block, an approval a false ask
  (both listed; ``debatable`` items are counted apart),
- ``mentions`` quote a dangerous command inside a document or a message; reported apart,
- every ``pii`` string goes through both hooks (as a parameter and as a tool result):
  each of its ``values`` must be gone (or, without values, the string must change);
  a string listing no kind, and every ``not_pii`` string, must come back unchanged.

Timing: microseconds per hook call over the developers' corpus and over everyday calls
and results, beside a no-op filter called through the same pluggy hook as the floor; a
20 KB source file; adversarial input (a 1 MB parameter, deeply nested JSON, a
10,000-word command, repetitive one-liners) with the time each took.

    python3 bench/security_eval.py [--repeat 200] [--no-timing]

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

from toolang_core import (
    AskApproval,
    Block,
    Modify,
    Observe,
    ToolCall,
    ToolCallContext,
    ToolResult,
    hookimpl,
)
from toolang_core.config.loader import load_config
from toolang_core.runtime import Runtime

try:
    import toolang_hook_security_filter as plugin
except ImportError:
    sys.exit(
        "toolang-hook-security-filter is not installed: "
        "pip install -e plugins/toolang-hook-security-filter"
    )

BENCH = Path(__file__).resolve().parent
CORPUS = BENCH / "security_corpus.json"
CORPORA = ("security_corpus", "security_blind", "security_heldout", "security_blind2")
MASK_KINDS = ("email", "phone", "card", "iban", "secret", "national_id")
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


def verdict_name(verdict: object) -> str:
    if isinstance(verdict, Block):
        return "block"
    if isinstance(verdict, AskApproval):
        return "approve"
    return "pass"


def masked_both(runtime: Runtime, text: str) -> tuple[str, str]:
    """``text`` after masking as a call's parameter and as a tool's result."""
    call = ToolCall("c1", "fs_write", {"path": "notes.txt", "text": text})
    answers = runtime.host.pm.hook.toolang_filter_tool_call(call=call, ctx=context(runtime, call))
    verdict = answers[0] if answers else None
    params = getattr(verdict, "params", None)
    as_param = str(params["text"]) if isinstance(verdict, Modify | AskApproval) and params else text
    result_call = ToolCall("c1", "fs_read", {"path": "notes.txt"})
    answers = runtime.host.pm.hook.toolang_filter_tool_result(
        call=result_call, result=ToolResult(ok=True, output=text), ctx=context(runtime, result_call)
    )
    as_result = str(answers[0].output) if answers else text
    return as_param, as_result


def class_of(item: dict[str, Any]) -> str:
    return str(item.get("class") or item.get("family") or item.get("category") or "other")


def evaluate_calls(runtime: Runtime, name: str, corpus: dict[str, Any]) -> dict[str, Any]:
    """Dangerous calls that would run unattended, benign calls blocked or asked about."""
    table: dict[str, dict[str, int]] = {}
    unattended = []
    for item in corpus["dangerous"]:
        got = verdict_name(check(runtime, item))
        row = table.setdefault(class_of(item), {"block": 0, "approve": 0, "pass": 0})
        row[got] += 1
        if got == "pass":
            unattended.append(item)
    blocked, asked, debatable_hits = [], [], 0
    benign_rows: dict[str, dict[str, int]] = {}
    for item in corpus["benign"]:
        verdict = check(runtime, item)
        got = verdict_name(verdict)
        row = benign_rows.setdefault(class_of(item), {"block": 0, "approve": 0, "pass": 0})
        row[got] += 1
        if got == "pass":
            continue
        if item.get("debatable"):
            debatable_hits += 1
        (blocked if got == "block" else asked).append((item, verdict))
    mentions = [verdict_name(check(runtime, item)) for item in corpus.get("mentions", [])]
    print(f"\n== {name}: {len(corpus['dangerous'])} dangerous, {len(corpus['benign'])} benign")
    print(f"  {'dangerous class':<26} {'n':>4} {'block':>6} {'approve':>8} {'pass':>5}")
    for cls, row in sorted(table.items()):
        print(
            f"  {cls:<26} {sum(row.values()):>4} {row['block']:>6} {row['approve']:>8} {row['pass']:>5}"  # noqa: E501
        )
    print(f"  dangerous calls that would run with no block and no approval: {len(unattended)}")
    for item in unattended:
        print(f"    MISS [{class_of(item)}] {describe(item)}")
    print(
        f"  benign blocked: {len(blocked)}   benign sent to approval: {len(asked)}"
        f"   (of which debatable: {debatable_hits})"
    )
    for label, hits in (("BLOCKED", blocked), ("ASKED", asked)):
        for item, verdict in hits:
            reason = getattr(verdict, "reason", "")
            mark = " (debatable)" if item.get("debatable") else ""
            print(f"    {label}{mark} {describe(item)}\n            {reason[:160]}")
    if mentions:
        print(
            f"  quoted mentions: {mentions.count('block')} blocked, {mentions.count('approve')} "
            f"asked, of {len(mentions)}"
        )
    return {
        "dangerous": len(corpus["dangerous"]),
        "dangerous_unattended": len(unattended),
        "dangerous_blocked": sum(r["block"] for r in table.values()),
        "dangerous_approve": sum(r["approve"] for r in table.values()),
        "benign": len(corpus["benign"]),
        "benign_blocked": len(blocked),
        "benign_approve": len(asked),
        "mentions": len(mentions),
        "mentions_blocked": mentions.count("block"),
        "table": table,
    }


def evaluate_pii(runtime: Runtime, name: str, corpus: dict[str, Any]) -> dict[str, Any]:
    """PII/secret strings missed (in parameters or results) and false masks."""
    missed, false_masks, per_kind = [], [], {}
    strings = [(item, True) for item in corpus["pii"] if item.get("kinds", item.get("pii_kinds"))]
    clean = [
        (item, False) for item in corpus["pii"] if not item.get("kinds", item.get("pii_kinds"))
    ]
    clean += [(item, False) for item in corpus.get("not_pii", [])]
    for item, has_pii in strings + clean:
        if item.get("debatable"):
            continue
        text = item["text"]
        as_param, as_result = masked_both(runtime, text)
        if has_pii:
            kind = str(item.get("kinds", item.get("pii_kinds"))[0])
            row = per_kind.setdefault(kind, [0, 0])
            row[0] += 1
            values = item.get("values") or []
            gone = (
                all(v not in as_param and v not in as_result for v in values)
                if values
                else text not in (as_param, as_result)
            )
            if not gone:
                row[1] += 1
                missed.append((kind, text, as_result))
        elif {as_param, as_result} != {text}:  # changed as a parameter or a result
            false_masks.append((text, as_result if as_result != text else as_param))
    with_pii, without = len(strings), len(clean)
    print(f"\n== {name}: {with_pii} strings with personal data or secrets, {without} without")
    print("  " + "  ".join(f"{k} {n - m}/{n}" for k, (n, m) in sorted(per_kind.items())))
    print(f"  missed: {len(missed)}   false masks: {len(false_masks)}")
    for kind, text, out in missed:
        print(f"    MISSED [{kind}] {text[:90]!r} -> {out[:90]!r}")
    for text, out in false_masks:
        print(f"    FALSE MASK {text[:90]!r} -> {out[:90]!r}")
    return {
        "pii": with_pii,
        "pii_missed": len(missed),
        "not_pii": without,
        "false_masks": len(false_masks),
    }


def adversarial(runtime: Runtime) -> dict[str, float]:
    """Seconds for input built to be slow: it must stay linear (bounded, quoted)."""
    nested: Any = "rm -rf ./x"
    for _ in range(30):
        nested = {"a": [nested]}
    cases = {
        "1 MB parameter": {
            "tool": "fs_write",
            "params": {"path": "a.txt", "text": "lorem ipsum " * 87_382},
        },
        "1 MB command": {"tool": "exec_run", "params": {"command": "echo " + "a " * 524_286}},
        "nested JSON (30 dicts in lists = 60 levels, refused)": {
            "tool": "exec_run",
            "params": {"options": nested},
        },
        "nested JSON (5000 levels, refused)": {"tool": "exec_run", "params": _deep(5000)},
        "10,000-word command": {
            "tool": "exec_run",
            "params": {"command": " ".join(f"w{i}" for i in range(10_000))},
        },
        "10,000-word pipeline": {
            "tool": "exec_run",
            "params": {"command": " | ".join(["cat"] * 10_000)},
        },
        "10,000 nested $(...)": {
            "tool": "exec_run",
            "params": {"command": "$(" * 2000 + "ls" + ")" * 2000},
        },
        "1 MB of digits": {"tool": "fs_write", "params": {"path": "a", "text": "4111 " * 209_715}},
    }
    out: dict[str, float] = {}
    print("\nadversarial input (one call each, seconds):")
    for label, item in cases.items():
        started = time.perf_counter()
        verdict = check(runtime, item)
        took = time.perf_counter() - started
        out[label] = round(took, 3)
        print(f"  {label:<52} {took:7.3f} s   -> {verdict_name(verdict)}")
    return out


def _deep(levels: int) -> dict[str, Any]:
    value: Any = "x"
    for _ in range(levels):
        value = {"k": value}
    return {"options": value}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="timing rounds per item")
    parser.add_argument("--no-timing", action="store_true", help="skip the timings")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "a").mkdir()
        (Path(tmp) / "b").mkdir()
        filtered = runtime_with(Path(tmp) / "a", "hook-security-filter", plugin)
        floor = runtime_with(Path(tmp) / "b", "noop-filter", NoopFilter())
        figures: dict[str, Any] = {}
        totals = dict.fromkeys(
            (
                "dangerous",
                "dangerous_unattended",
                "benign",
                "benign_blocked",
                "benign_approve",
                "pii",
                "pii_missed",
                "not_pii",
                "false_masks",
            ),
            0,
        )
        classes: dict[str, dict[str, int]] = {}
        for name in CORPORA:
            corpus = json.loads((BENCH / f"{name}.json").read_text(encoding="utf-8"))
            calls = evaluate_calls(filtered, name, corpus)
            pii = evaluate_pii(filtered, name, corpus)
            for cls, row in calls.pop("table").items():
                total = classes.setdefault(cls, {"block": 0, "approve": 0, "pass": 0})
                for key, count in row.items():
                    total[key] += count
            figures[name] = {**calls, **pii}
            for key in totals:
                totals[key] += figures[name].get(key, 0)
        print("\n== per class, all corpora")
        print(f"  {'dangerous class':<26} {'n':>4} {'block':>6} {'approve':>8} {'pass':>5}")
        for cls, row in sorted(classes.items()):
            print(
                f"  {cls:<26} {sum(row.values()):>4} {row['block']:>6} {row['approve']:>8} {row['pass']:>5}"  # noqa: E501
            )
        rates = {
            "benign_blocked_rate": round(totals["benign_blocked"] / max(totals["benign"], 1), 4),
            "benign_approve_rate": round(totals["benign_approve"] / max(totals["benign"], 1), 4),
            "pii_missed_rate": round(totals["pii_missed"] / max(totals["pii"], 1), 4),
            "false_mask_rate": round(totals["false_masks"] / max(totals["not_pii"], 1), 4),
        }
        figures["total"] = {**totals, **rates}
        figures["adversarial_s"] = adversarial(filtered)
        if not args.no_timing:
            corpus = json.loads(CORPUS.read_text(encoding="utf-8"))
            figures["timing"] = timings(filtered, floor, corpus, args.repeat)
    goals = {
        "dangerous unattended = 0": totals["dangerous_unattended"] == 0,
        "benign blocked < 1 %": rates["benign_blocked_rate"] < 0.01,
        "benign sent to approval < 5 %": rates["benign_approve_rate"] < 0.05,
        "PII/secrets missed < 2 %": rates["pii_missed_rate"] < 0.02,
        "false masks < 1 %": rates["false_mask_rate"] < 0.01,
    }
    print(f"\ntotal: {json.dumps(figures['total'])}")
    for goal, met in goals.items():
        print(f"  {goal:<32} {'met' if met else 'NOT met'}")
    figures["goals_met"] = all(goals.values())
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
