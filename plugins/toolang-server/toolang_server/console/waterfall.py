"""Console: a turn's steps as a waterfall — each step's start offset and duration as a
bar on the turn's time axis, with the model and token counts of a model call and the
hook verdicts of a tool call (the trace page draws it with CSS, no script)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from toolang_core import StepRecord


@attrs.frozen
class Bar:
    """One step on the waterfall: offsets in milliseconds from the turn's start, and its
    bar's left edge and width in percent of the whole."""

    seq: int
    kind: str
    status: str
    label: str
    offset_ms: float
    duration_ms: float
    left: float
    width: float
    model: str | None = None
    tokens: dict[str, int] = attrs.field(factory=dict)
    verdicts: tuple[tuple[str, str, str], ...] = ()
    """``(stage, verdict, plugin)`` of each hook stage of a tool call's chain."""


def _label(step: StepRecord) -> str:
    data = step.data
    if step.kind == "tool_call":
        return str((data.get("call") or {}).get("name") or "tool call")
    if step.kind == "model_call":
        asked = [c.get("name") for c in (data.get("response") or {}).get("tool_calls", ())]
        return "model → " + ", ".join(map(str, asked)) if asked else "model answers"
    return step.kind.replace("_", " ")


def bars(steps: Sequence[StepRecord], start: float, end: float | None) -> list[Bar]:
    """The waterfall of ``steps`` on the axis from ``start`` to ``end`` (the turn's
    finish; while it runs, the latest step's end)."""
    if not steps:
        return []
    last = max(s.finished_at or s.started_at for s in steps)
    span = max((end or last) - start, last - start, 1e-6)
    out = []
    for step in steps:
        offset = max(step.started_at - start, 0.0)
        duration = max((step.finished_at or step.started_at) - step.started_at, 0.0)
        data = step.data
        chain = data.get("chain", ()) if step.kind == "tool_call" else ()
        out.append(
            Bar(
                seq=step.seq,
                kind=step.kind,
                status=step.status,
                label=_label(step),
                offset_ms=offset * 1000,
                duration_ms=duration * 1000,
                left=min(offset / span * 100, 100.0),
                # At least a sliver, so an instant step still shows where it happened.
                width=max(min(duration / span * 100, 100.0 - offset / span * 100), 0.4),
                model=data.get("model") if step.kind in ("model_call", "prompt_build") else None,
                tokens={k: v for k, v in (data.get("tokens") or {}).items() if v is not None},
                verdicts=tuple(
                    (str(c.get("stage")), str(c.get("verdict")), str(c.get("plugin") or "—"))
                    for c in chain
                ),
            )
        )
    return out


def token_totals(items: Sequence[Bar]) -> dict[str, int]:
    """The turn's tokens: each count summed over its model calls."""
    totals: dict[str, int] = {}
    for bar in items:
        for key, value in bar.tokens.items():
            totals[key] = totals.get(key, 0) + int(value)
    return totals
