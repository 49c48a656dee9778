"""A turn's run trace as a readable timeline (``toolang turns trace ID``).

The steps are what the store holds — already clipped and with secrets masked when they
were recorded. Each line starts with the time since the turn started; a tool call is
followed by one line per stage of the tool-hook chain with that stage's verdict, so a
reader sees which filter, gate or observer did what.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from toolang_core.store.types import StepRecord, TurnRequest

WIDTH = 100


def _short(value: Any, width: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _ms(step: StepRecord) -> str:
    return f"{(step.finished_at - step.started_at) * 1000:.1f} ms"


def stage_lines(chain: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per chain stage record: ``stage  verdict  (plugin)  detail``."""
    lines = []
    for record in chain:
        plugin = f" ({record['plugin']})" if record.get("plugin") else ""
        detail = f"  {_short(record['detail'], 60)}" if record.get("detail") else ""
        lines.append(f"{record['stage']:<17}{record['verdict']:<9}{plugin}{detail}".rstrip())
    return lines


def _model_call(data: Mapping[str, Any]) -> list[str]:
    response = data.get("response") or {}
    usage = response.get("usage") or {}
    tokens = f", {sum(usage.values())} tokens" if usage else ""
    flag = ", prompt truncated" if data.get("truncated") else ""
    head = f"{data.get('model', '?')}: {len(data.get('messages', ()))} messages{tokens}{flag}"
    lines = [head, *_files_sent(data.get("files", ()))]
    for call in response.get("tool_calls", ()):
        lines.append(f"→ asks for {call['name']}({_short(call.get('params', {}), 60)})")
    if response.get("text"):
        lines.append(f"→ says {_short(response['text'], 80)!r}")
    if data.get("error_kind"):  # a failed attempt (toolang_core.turn.model_retry)
        after = {
            "retry": f"retried in {data.get('wait_seconds', 0)} s",
            "fallback": f"falls back to {data.get('fallback_to', '?')}",
        }.get(str(data.get("next")), "given up")
        lines.append(f"→ attempt {data.get('attempt', '?')} failed ({data['error_kind']}): {after}")
    return lines


def _files_sent(files: Iterable[Mapping[str, Any]]) -> list[str]:
    """What the call's model got of each file in its prompt: attached, or a text
    reference in its place (and why)."""
    lines = []
    for f in files:
        size = f"{f.get('size', '?')} bytes"
        what = f"file {f.get('name', '?')!r} ({f.get('media_type', '?')}, {size})"
        if f.get("sent") == "attached":
            lines.append(f"{what} attached")
        else:
            lines.append(f"{what} sent as a text reference: {_short(f.get('why', ''), 70)}")
    return lines


_DECISIONS = {
    "rerun": "run again",
    "told_model": "NOT run again; the model was told it may already have run",
    "approved": "run again, approved by a person",
    "denied": "NOT run again; a person said no",
}


def _tool_call(data: Mapping[str, Any]) -> list[str]:
    call = data.get("call") or {}
    head = f"{call.get('name', '?')}({_short(call.get('params', {}), 50)})"
    if "result" not in data:  # an intent: the tool started and recorded no result yet
        return [f"{head} → started, no result recorded (in doubt if the turn was interrupted)"]
    result = data["result"] or {}
    outcome = (
        f"ok: {_short(result.get('output'), 60)}"
        if result.get("ok")
        else f"{result.get('error_type') or 'error'}: {_short(result.get('error') or '', 60)}"
    )
    lines = [f"{head} → {outcome}"]
    doubt = data.get("in_doubt")
    if doubt:
        decision = doubt.get("decision", "?")
        lines.append(
            f"IN DOUBT: started in attempt {doubt.get('intent_attempt', '?')}, no result "
            f"recorded → {_DECISIONS.get(decision, decision)} ({_short(doubt.get('detail'), 60)})"
        )
        if doubt.get("note"):  # e.g. its program, still running at the start, was killed
            lines.append(f"IN DOUBT: {doubt['note']}")
    if data.get("params_modified"):
        lines.append("parameters were changed by a security filter before the call ran")
    lines += stage_lines(data.get("chain", ()))
    return lines


def _prompt_build(data: Mapping[str, Any]) -> list[str]:
    tools = data.get("tools", ())
    line = (
        f"agent {data.get('agent', '?')}, model {data.get('model', '?')}, "
        f"{len(tools)} tool(s), {data.get('history_messages', 0)} history message(s)"
    )
    notes = [f"note: {_short(n, 80)}" for n in data.get("notes", ())]
    context = data.get("context")
    if context:  # [agents] context_tokens: what the budget left in the prompt
        summary = context.get("summary")
        line += (
            f"; {context.get('prompt_tokens', '?')}/{context.get('budget', '?')} tokens "
            f"({context.get('counted_by', '?')}), {context.get('history_turns', 0)} recent turn(s)"
            + (f" after a summary of {summary.get('turns', 0)}" if summary else "")
        )
        if context.get("compaction_failed"):
            notes.append(f"compaction failed: {_short(context['compaction_failed'], 60)}")
    notes += [_short(reason, 120) for reason in data.get("fallbacks_skipped", ())]
    return [line, *notes]


def _compaction(data: Mapping[str, Any]) -> list[str]:
    """Which turns a compaction folded into the thread's summary, and by which model."""
    head = (
        f"{data.get('model', '?')}: {data.get('summarised_turns', 0)} turn(s)"
        + (f" and {data['summarised_notes']} note(s)" if data.get("summarised_notes") else "")
        + (" added to the summary" if data.get("previous_summary") else " summarised")
        + f" (now {data.get('turns_in_summary', 0)} turn(s) up to #{data.get('through_seq', '?')}, "
        f"{data.get('summary_tokens', 0)} tokens{', cut to fit' if data.get('cut') else ''})"
    )
    spent = data.get("tokens") or {}
    if spent:  # what the summarising call cost, as the turn's usage counts it
        head += f"; {spent.get('input', 0) + spent.get('output', 0)} tokens spent"
    return [head, f"summary: {_short(data.get('summary', ''), 80)}"]


def _memory_recall(data: Mapping[str, Any]) -> list[str]:
    request = data.get("request") or {}
    head = (
        f"{data.get('plugin', '?')}: recall {request.get('query', '')!r} → "
        f"{data.get('count', 0)} item(s)"
    )
    if data.get("degraded"):
        head += f"; degraded: {_short(data.get('error') or '', 60)}"
    return [head, *(f"remembered: {_short(line, 80)}" for line in data.get("rendered", ())[:5])]


def _guardrail(data: Mapping[str, Any]) -> list[str]:
    """Who rewrote the prompt or answer, and who refused it (guards' names and rules)."""
    hook = data.get("hook", "?")
    lines = [
        f"{hook}: rewritten by {each.get('plugin', '?')} ({_short(each.get('reason', ''), 50)})"
        for each in data.get("rewritten_by", ())
    ]
    refused = data.get("refused")
    if refused:
        lines.append(
            f"{hook}: refused by {refused.get('plugin', '?')}, rule {refused.get('rule', '?')}"
            + (f": {_short(refused['reason'], 50)}" if refused.get("reason") else "")
        )
    return lines


def _output_check(data: Mapping[str, Any]) -> list[str]:
    """One typed answer checked against its schema (toolang_core.turn.output)."""
    which = f"answer {data.get('attempt', '?')} of {data.get('attempts', '?')}"
    if data.get("valid"):
        return [f"{which} matches the schema of {data.get('schema_from', '?')}"]
    errors = "; ".join(str(e) for e in data.get("errors", ()))
    return [f"{which} rejected: {_short(errors, 70)}"]


_DETAILS = {
    "model_call": _model_call,
    "tool_call": _tool_call,
    "prompt_build": _prompt_build,
    "memory_recall": _memory_recall,
    "guardrail": _guardrail,
    "compaction": _compaction,
    "output_check": _output_check,
}


def in_doubt(steps: Sequence[StepRecord]) -> list[dict[str, Any]]:
    """The tool calls of ``steps`` found in doubt (what was decided), and those still
    without a result (``decision`` ``None``: running, or cut off and not resumed yet)."""
    found = []
    for step in steps:
        if step.kind != "tool_call" or (step.status != "intent" and "in_doubt" not in step.data):
            continue
        call = step.data.get("call") or {}
        doubt = step.data.get("in_doubt") or {}
        found.append(
            {
                "seq": step.seq,
                "call_id": call.get("id"),
                "tool": call.get("name"),
                "intent_attempt": doubt.get("intent_attempt", step.attempt),
                "decision": doubt.get("decision"),
                "detail": doubt.get("detail"),
                "note": doubt.get("note"),
            }
        )
    return found


def after_lines(after: Mapping[str, Any] | None, start: float) -> list[str]:
    """The post-turn stages (prompt trace, memory write, events, delivery) as lines."""
    if not after:
        return []
    lines = ["after the turn:"]
    for stage in after.get("stages", ()):
        detail = stage.get("detail") or {}
        note = detail.get("error") or ", ".join(detail.get("failures", ())) or ""
        if stage["stage"] == "memory_write" and stage["ok"]:
            note = f"{detail.get('plugin', '?')}: {detail.get('count', 0)} written"
        elif stage["stage"] == "delivery" and stage["ok"]:
            note = f"by {', '.join(detail.get('by', ())) or '-'}"
        verdict = "ok" if stage["ok"] else "failed"
        offset = stage["at"] - start
        line = f"{offset:+8.3f}s      {stage['stage']:<13} {verdict:<9} {_short(note, 60)}"
        lines.append(line.rstrip())
    for name in after.get("unfinished", ()):  # begun after the commit, never recorded
        lines.append(f"{'':<15}{name:<13} {'unknown':<9} {UNRECORDED}")
    return lines


UNRECORDED: Final = "not recorded (the runtime stopped first?)"
"""A stage that began after the turn's state was committed and whose outcome was never
recorded: the runtime stopped before (it may not have run) or its record could not be
stored (it ran; the log says so)."""


def step_lines(step: StepRecord) -> list[str]:
    """The detail lines of one step (its kind decides what matters)."""
    render = _DETAILS.get(step.kind)
    lines = render(step.data) if render is not None else []
    if not lines and step.data:
        lines = [_short(step.data, WIDTH - 20)]
    if step.error and step.kind not in ("tool_call", "output_check"):  # said already
        lines.append(f"error: {_short(step.error, 80)}")
    return lines


def timeline(
    turn: TurnRequest, steps: Sequence[StepRecord], after: Mapping[str, Any] | None = None
) -> list[str]:
    """The whole trace of ``turn`` as text lines (``after``: its post-turn record)."""
    start = turn.started_at or (steps[0].started_at if steps else turn.created_at)
    lines = [
        f"turn {turn.id} on {turn.thread_id}: {turn.status.value}"
        + (f" ({turn.outcome})" if turn.outcome else "")
        + f", attempt {turn.attempt}",
        f"input  {_short(turn.input, WIDTH - 7)}",
    ]
    attempt = None
    for step in steps:
        if step.attempt != attempt and attempt is not None:
            lines.append(f"-- attempt {step.attempt} (resumed; completed steps are replayed) --")
        attempt = step.attempt
        offset = step.started_at - start
        lines.append(
            f"{offset:+8.3f}s  {step.seq:>3} {step.kind:<13} {step.status:<9} {_ms(step):>10}"
        )
        lines += [f"{'':16}{line}" for line in step_lines(step)]
    lines += after_lines(after, start)
    if turn.output:
        lines.append(f"output {_short(turn.output, WIDTH - 7)}")
    if turn.error:
        lines.append(f"error  {_short(turn.error, WIDTH - 7)}")
    return lines
