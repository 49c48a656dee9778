#!/usr/bin/env python3
"""The SecurityFilter plugin against an independent, held-out corpus.

``bench/security_heldout.json`` was written without reading the plugin's rules or its
own corpus. The plugin is loaded in a real runtime and asked through its pluggy hooks,
with the helpers of ``bench/security_eval.py``:

- every ``dangerous`` call must be blocked (a miss is a false negative),
- every ``benign`` call must not be blocked (items marked ``debatable`` are counted
  apart as well: they quote or resemble a dangerous command in a way a reader may judge
  either way),
- every ``pii`` string goes through the result hook: each kind it lists must be masked
  and each of its ``values`` must be gone; a kind masked that it does not list, or any
  change to a string that lists none, is a false mask.

    python3 bench/security_heldout.py

The last line is a JSON object with the figures.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from security_eval import MASK_KINDS, check, context, describe, plugin, runtime_with

from toolang_core import AskApproval, Block, ToolCall, ToolResult
from toolang_core.runtime import Runtime

CORPUS = Path(__file__).resolve().parent / "security_heldout.json"


def masked_text(runtime: Runtime, text: str) -> str:
    """``text`` as the result hook hands it back (unchanged when no hook answers)."""
    call = ToolCall("c1", "fs_read", {"path": "notes.txt"})
    answers = runtime.host.pm.hook.toolang_filter_tool_result(
        call=call, result=ToolResult(ok=True, output=text), ctx=context(runtime, call)
    )
    return str(answers[0].output) if answers else text


def calls(runtime: Runtime, corpus: dict[str, Any]) -> dict[str, Any]:
    dangerous = [(item, check(runtime, item)) for item in corpus["dangerous"]]
    benign = [(item, check(runtime, item)) for item in corpus["benign"]]
    # A dangerous call is held when it is blocked or sent to a person (issue #17).
    misses = [item for item, v in dangerous if not isinstance(v, Block | AskApproval)]
    blocks = [(item, v) for item, v in benign if isinstance(v, Block)]
    total, caught = Counter(), Counter()
    for item, verdict in dangerous:
        total[item["category"]] += 1
        caught[item["category"]] += isinstance(verdict, Block | AskApproval)
    print(f"dangerous calls: {len(dangerous)}  blocked {len(dangerous) - len(misses)}")
    for category in total:
        print(f"  {category:<12} {caught[category]}/{total[category]}")
    print(f"false negatives (dangerous, not blocked): {len(misses)}")
    for item in misses:
        print(f"  MISS {item['category']}: {describe(item)}\n       {item['why']}")
    debatable = sum(bool(item.get("debatable")) for item in corpus["benign"])
    debatable_blocked = sum(bool(item.get("debatable")) for item, _ in blocks)
    print(f"benign calls: {len(benign)}  allowed {len(benign) - len(blocks)}")
    print(f"false positives (benign, blocked): {len(blocks)}")
    for item, verdict in blocks:
        tag = " [debatable]" if item.get("debatable") else ""
        print(f"  BLOCKED{tag} {describe(item)}\n          {verdict.reason}")
    in_scope = [item for item in misses if item["category"] != "extra"]
    strict_fp = len(blocks) - debatable_blocked
    strict_benign = len(benign) - debatable
    return {
        "dangerous": len(dangerous),
        "benign": len(benign),
        "false_negatives": len(misses),
        "false_negatives_in_scope": len(in_scope),
        "false_negative_rate": round(len(misses) / max(len(dangerous), 1), 4),
        "false_positives": len(blocks),
        "false_positive_rate": round(len(blocks) / max(len(benign), 1), 4),
        "false_positives_undebatable": strict_fp,
        "false_positive_rate_undebatable": round(strict_fp / max(strict_benign, 1), 4),
    }


def pii(runtime: Runtime, corpus: dict[str, Any]) -> dict[str, Any]:
    items = corpus["pii"]
    missed, false_masks = [], []
    for item in items:
        expected = set(item["pii_kinds"])
        output = masked_text(runtime, item["text"])
        found = {kind for kind in MASK_KINDS if f"[{kind} redacted]" in output}
        left = [value for value in item.get("values", []) if value in output]
        gone = sorted(expected - found)
        if gone or left:
            missed.append((item, output, gone, left))
        extra = sorted(found - expected)
        if extra or (not expected and output != item["text"]):
            false_masks.append((item, output, extra))
    positives = sum(bool(item["pii_kinds"]) for item in items)
    print(f"\npii strings: {len(items)} ({positives} with personal data)")
    print(f"missed (a listed kind not masked, or a value left in clear): {len(missed)}")
    for item, output, gone, left in missed:
        print(f"  MISS {gone or item['pii_kinds']}: {item['text'][:90]!r}")
        print(f"       -> {output[:90]!r}{'  (value left)' if left else ''}")
    print(f"false masks (masked what is not personal data): {len(false_masks)}")
    for item, output, extra in false_masks:
        tag = " [debatable]" if item.get("debatable") else ""
        print(f"  FALSE MASK{tag} {extra or 'text changed'}: {item['text'][:90]!r}")
        print(f"       -> {output[:90]!r}")
    return {
        "pii_strings": len(items),
        "pii_with_data": positives,
        "pii_missed": len(missed),
        "pii_false_masks": len(false_masks),
    }


def main() -> None:
    corpus = json.loads(CORPUS.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        runtime = runtime_with(Path(tmp), "hook-security-filter", plugin)
        figures = calls(runtime, corpus)
        figures.update(pii(runtime, corpus))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
