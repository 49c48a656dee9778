"""Console: one turn's trace page — its waterfall (:mod:`.waterfall`), its timeline of
steps with every hook stage's verdict, the progress its tools reported, and the five
post-turn stages in order (one with nothing to do shown as skipped, with why; one
begun and never recorded as unknown)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolang_core import AFTER_KIND, AFTER_STAGES
from toolang_server.api_turns import UNRECORDED, get_turn, turn_json
from toolang_server.console import waterfall
from toolang_server.console.pages import render
from toolang_server.http import caller_of, runtime_of, store_of
from toolang_server.turn_events import TurnEvents

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from toolang_core import RegisterRoute


async def trace_page(request: Request) -> Response:
    """Console: one turn's trace — its steps with every hook stage's verdict, the
    progress its tools reported (kept by this runtime: :mod:`toolang_server.turn_events`),
    and the post-turn stages in order."""
    runtime, caller = runtime_of(request), caller_of(request)
    turn = get_turn(runtime, caller, request.path_params["turn_id"])
    store = store_of(runtime)
    steps = store.steps(turn.id)
    after = store.get_record(AFTER_KIND, turn.id)
    start = turn.started_at or (steps[0].started_at if steps else turn.created_at)
    bars = waterfall.bars(steps, start, turn.finished_at)
    return render(
        request,
        "trace.html",
        "/turns",
        f"Turn {turn.id[-8:]}",
        turn=turn,
        raw=turn_json(turn, runtime),
        steps=steps,
        start=start,
        bars=bars,
        span_ms=max((b.offset_ms + b.duration_ms for b in bars), default=0.0),
        tokens=waterfall.token_totals(bars),
        progress=TurnEvents.of(runtime).recent(turn.id),
        after=after_stages(
            turn,
            after.data.get("stages") if after is not None else None,
            after.data.get("unfinished") if after is not None else None,
        ),
        refresh=0 if turn.status.is_terminal else 2,
    )


SKIPPED = {
    "turn_state": "",
    "prompt_trace": "nothing to trace: the turn built no prompt",
    "memory_write": "nothing to remember: memory is off, or [memory] save_turns leaves out "
    "this source",
    "events": "no event subscriber (toolang_on_event) in this run",
    "delivery": "no delivery plugin (toolang_deliver_turn) in this run",
}
"""Why a stage that is not recorded did not run: the runtime records only the stages
that had something to do."""


def after_stages(
    turn: Any, recorded: list[dict[str, Any]] | None, unfinished: list[str] | None = None
) -> list[dict[str, Any]]:
    """All five after-turn stages in their order, each as recorded, or — one begun and
    never recorded (``unfinished``) — marked ``unknown``, or — one with nothing to do —
    marked ``skipped`` with why; ``[]`` while the turn runs."""
    if not turn.status.is_terminal:
        return []
    done = {stage["stage"]: stage for stage in recorded or ()}
    rows = []
    for name in AFTER_STAGES:
        if name in done:
            rows.append({**done[name], "skipped": False})
        elif name in (unfinished or ()):
            rows.append(
                {
                    "stage": name,
                    "ok": False,
                    "skipped": False,
                    "unknown": True,
                    "detail": {"error": UNRECORDED},
                }
            )
        elif name == "turn_state":  # committed with the turn: recorded only with others
            rows.append(
                {
                    "stage": name,
                    "ok": True,
                    "skipped": False,
                    "detail": {"status": turn.status.value},
                }
            )
        else:
            rows.append(
                {"stage": name, "ok": True, "skipped": True, "detail": {"why": SKIPPED[name]}}
            )
    return rows


def register(register_route: RegisterRoute) -> None:
    register_route("/turns/{turn_id}", trace_page)
