"""A turn's progress as Server-Sent Events.

Events, in the order they happen: ``admitted`` (the turn started running),
``model_call`` (``phase`` ``started`` when its first text arrives, ``finished`` when
the step is recorded, with the tool calls it asked for), ``tool_call`` (its result and
every hook stage's verdict), ``approval`` (a tool call waits for a person), ``text``
(``{"call", "delta"}``: answer text as the model produces it), and last ``finished``
(``status``, ``output``, ``error``, ``outcome``).

The ``text`` deltas of the last ``call`` join to the stored output: a stream that
attached late, or a model that does not stream, gets what it missed as one more delta
before ``finished``. Watching never affects the turn: a client that goes away only
closes its own watch.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

from toolang_core import ApprovalBook, TurnStatus, TurnStreams, redact

if TYPE_CHECKING:
    from toolang_core import Runtime, StepRecord

POLL_SECONDS: Final = 0.05
KEEPALIVE_SECONDS: Final = 15.0


def sse(kind: str, data: Any) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n".encode()


def _step_event(step: StepRecord) -> tuple[str, dict[str, Any]]:
    data = step.data
    if step.kind == "model_call":
        response = data.get("response") or {}
        return "model_call", {
            "phase": "finished",
            "seq": step.seq,
            "status": step.status,
            "model": data.get("model"),
            "tool_calls": [c.get("name") for c in response.get("tool_calls", ())],
            "error": step.error,
        }
    if step.kind == "tool_call":
        call = data.get("call") or {}
        result = data.get("result") or {}
        return "tool_call", {
            "seq": step.seq,
            "tool": call.get("name"),
            "ok": bool(result.get("ok")),
            "error": result.get("error"),
            "chain": [
                {k: stage.get(k) for k in ("stage", "verdict", "plugin")}
                for stage in data.get("chain", ())
            ],
        }
    return "step", {"seq": step.seq, "kind": step.kind, "status": step.status}


async def turn_events(runtime: Runtime, turn_id: str) -> AsyncIterator[bytes]:
    """The SSE byte stream of ``turn_id`` until it finishes (the turn must exist)."""
    inbox = runtime.inbox
    assert inbox is not None
    store = inbox.store
    watch = TurnStreams.of(runtime).watch(turn_id)
    loop = asyncio.get_running_loop()
    steps_seen = 0
    admitted = False
    approvals_seen: set[str] = set()
    call, shown = "", ""
    last_sent = loop.time()
    try:
        while True:
            # Text first: every delta published before the turn's state changed is
            # already queued, so the final reconciliation below sees all of it.
            try:
                delta = await asyncio.wait_for(watch.queue.get(), POLL_SECONDS)
            except TimeoutError:
                delta = None
            chunks: list[bytes] = []
            while delta is not None:
                if not admitted:  # text means it runs, even before a poll saw it
                    admitted = True
                    chunks.append(sse("admitted", {"status": "running"}))
                if delta.call != call:
                    call, shown = delta.call, ""
                    chunks.append(sse("model_call", {"phase": "started", "call": call}))
                shown += delta.delta
                chunks.append(sse("text", {"call": call, "delta": delta.delta}))
                delta = watch.queue.get_nowait() if not watch.queue.empty() else None
            turn = inbox.get(turn_id)
            if not admitted and turn.status is not TurnStatus.QUEUED:
                admitted = True
                chunks.append(sse("admitted", {"status": turn.status.value,
                                                "attempt": turn.attempt}))
            steps = store.steps(turn_id)
            for step in steps[steps_seen:]:
                chunks.append(sse(*_step_event(step)))
            steps_seen = len(steps)
            if turn.status is TurnStatus.AWAITING_APPROVAL:
                for approval in ApprovalBook(store).list("pending"):
                    if approval.turn_id == turn_id and approval.id not in approvals_seen:
                        approvals_seen.add(approval.id)
                        chunks.append(sse("approval", {
                            "approval_id": approval.id,
                            "tool": approval.tool,
                            "params": redact(dict(approval.params)),
                            "prompt": approval.prompt,
                        }))
            if turn.status.is_terminal:
                output = turn.output or ""
                if output and output != shown:
                    if not output.startswith(shown):  # the stream was not the answer
                        call, shown = f"{call or 'output'}:final", ""
                    chunks.append(sse("text", {"call": call or "output",
                                               "delta": output[len(shown):]}))
                chunks.append(sse("finished", {
                    "turn_id": turn.id,
                    "status": turn.status.value,
                    "output": turn.output,
                    "error": turn.error,
                    "outcome": turn.outcome,
                }))
                for chunk in chunks:
                    yield chunk
                return
            if not chunks and loop.time() - last_sent > KEEPALIVE_SECONDS:
                chunks.append(b": keep-alive\n\n")
            for chunk in chunks:
                yield chunk
            if chunks:
                last_sent = loop.time()
    finally:
        watch.close()
