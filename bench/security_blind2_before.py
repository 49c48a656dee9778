"""Black-box run of the security filter over bench/security_blind2.json.

Written for issue #17 before the filter's source was read: it calls only the plugin's
two hooks, as the tool chain does, and counts what would run unattended. Used once to
record the "before" figures (bench/security_blind2_before.txt); bench/security_eval.py
reports the same corpus afterwards.

    .venv/bin/python bench/security_blind2_before.py
"""

from __future__ import annotations

import collections
import json
import pathlib
import sys
import tempfile

import toolang_hook_security_filter as plugin
from toolang_core import (
    AskApproval,
    Block,
    Modify,
    Runtime,
    ToolangConfig,
    ToolCall,
    ToolCallContext,
    ToolResult,
)

CORPUS = pathlib.Path(__file__).with_name("security_blind2.json")


_RUNTIME = Runtime.with_plugins(
    ToolangConfig(home=pathlib.Path(tempfile.mkdtemp()) / ".toolang"), [(plugin.NAME, plugin)]
)
"""A bare runtime with the filter at its default settings (a context needs one)."""


def _ctx(call: ToolCall) -> ToolCallContext:
    return ToolCallContext(
        call=call, turn_id="t", thread_id="th", run_id="r", agent="a", runtime=_RUNTIME
    )


def _verdict(tool: str, params: dict[str, object]) -> str:
    call = ToolCall("c1", tool, params)
    v = plugin.toolang_filter_tool_call(call, _ctx(call))
    if isinstance(v, Block):
        return "block"
    if isinstance(v, AskApproval):
        return "approve"
    return "pass"


def _masked_text(text: str) -> tuple[str, str]:
    """The text after masking as a parameter and as a tool result."""
    call = ToolCall("c1", "fs_write", {"text": text})
    v = plugin.toolang_filter_tool_call(call, _ctx(call))
    as_param = str(v.params["text"]) if isinstance(v, Modify) else text
    res = plugin.toolang_filter_tool_result(call, ToolResult(ok=True, output=text), _ctx(call))
    as_result = str(res.output) if res is not None else text
    return as_param, as_result


def main() -> int:  # noqa: PLR0912
    corpus = json.loads(CORPUS.read_text())
    unattended: list[dict[str, object]] = []
    per_class: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for item in corpus["dangerous"]:
        got = _verdict(item["tool"], item["params"])
        per_class[item["class"]][got] += 1
        if got == "pass":
            unattended.append(item)
    benign_blocked, benign_approve = [], []
    for item in corpus["benign"]:
        got = _verdict(item["tool"], item["params"])
        if got == "block":
            benign_blocked.append(item)
        elif got == "approve":
            benign_approve.append(item)
    missed = []
    for item in corpus["pii"]:
        p, r = _masked_text(item["text"])
        if any(val in p or val in r for val in item["values"]):
            missed.append(item)
    false_masks = []
    for item in corpus["not_pii"]:
        p, r = _masked_text(item["text"])
        if p != item["text"] or r != item["text"]:
            false_masks.append((item["text"], p))
    nd, nb, npii, nn = (len(corpus[k]) for k in ("dangerous", "benign", "pii", "not_pii"))
    print(f"{'class':<22} {'n':>4} {'block':>6} {'approve':>8} {'pass':>5}")
    for cls, cnt in sorted(per_class.items()):
        print(
            f"{cls:<22} {sum(cnt.values()):>4} {cnt['block']:>6} {cnt['approve']:>8} {cnt['pass']:>5}"  # noqa: E501
        )
    print(f"\ndangerous run unattended: {len(unattended)}/{nd}")
    for item in unattended:
        print(f"  [{item['class']}] {item['tool']} {json.dumps(item['params'])}")
    print(f"benign blocked: {len(benign_blocked)}/{nb}")
    for item in benign_blocked:
        print(f"  [{item['class']}] {item['tool']} {json.dumps(item['params'])}")
    print(f"benign sent to approval: {len(benign_approve)}/{nb}")
    print(f"pii/secrets missed: {len(missed)}/{npii}")
    for item in missed:
        print(f"  [{item['pii_kinds'][0]}] {item['text']!r}")
    print(f"false masks: {len(false_masks)}/{nn}")
    for text, masked in false_masks:
        print(f"  {text!r} -> {masked!r}")
    print(
        json.dumps(
            {
                "dangerous_unattended": len(unattended),
                "dangerous": nd,
                "benign_blocked": len(benign_blocked),
                "benign_approve": len(benign_approve),
                "benign": nb,
                "pii_missed": len(missed),
                "pii": npii,
                "false_masks": len(false_masks),
                "not_pii": nn,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
