"""A turn's progress as Server-Sent Events.

Events, in the order they happen: ``admitted`` (the turn started running),
``model_call`` (``phase`` ``started`` when its first text arrives, ``finished`` when
the step is recorded, with the tool calls it asked for), ``progress`` (a tool call in
flight reports how far it got: the bus's ``tool.progress`` events, see
:mod:`toolang_server.turn_events`), ``tool_call`` (``phase`` ``started`` while the
tool runs — ``ok`` is then ``null`` — and ``finished`` with its result and every hook
stage's verdict; a watcher that attached mid-call gets both, in that order),
``approval`` (a tool call waits for a person), ``text``
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

from toolang_core import ApprovalBook, TurnStatus, TurnStreams, output_value, redact
from toolang_server.turn_events import TurnEvents

if TYPE_CHECKING:
    from toolang_core import ExecutionStore, Runtime, StepRecord, TextDelta, TurnRequest

POLL_SECONDS: Final = 0.05
KEEPALIVE_SECONDS: Final = 15.0


def sse(kind: str, data: Any) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n".encode()


def step_event(step: StepRecord) -> tuple[str, dict[str, Any]]:
    """The SSE event for one recorded step."""
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
        running = step.status == "intent"  # stored before the tool runs: no result yet
        return "tool_call", {
            "phase": "started" if running else "finished",
            "seq": step.seq,
            "tool": call.get("name"),
            "ok": None if running else bool(result.get("ok")),
            "error": result.get("error"),
            "chain": [
                {k: stage.get(k) for k in ("stage", "verdict", "plugin")}
                for stage in data.get("chain", ())
            ],
        }
    return "step", {"seq": step.seq, "kind": step.kind, "status": step.status}


class _Progress:
    """What one watcher has been sent so far."""

    def __init__(self, store: ExecutionStore, turn_id: str, agents: Any = None) -> None:
        self.store = store
        self.turn_id = turn_id
        self.agents = agents  # to know an agent's typed answers (output_schema)
        self.steps_seen = 0
        self.running: set[int] = set()  # tool calls sent as started, not yet finished
        self.admitted = False
        self.approvals_seen: set[str] = set()
        self.call = ""
        self.shown = ""

    def text(self, delta: TextDelta) -> list[bytes]:
        out = []
        if not self.admitted:  # text means it runs, even before a poll saw it
            self.admitted = True
            out.append(sse("admitted", {"status": "running"}))
        if delta.call != self.call:
            self.call, self.shown = delta.call, ""
            out.append(sse("model_call", {"phase": "started", "call": self.call}))
        self.shown += delta.delta
        out.append(sse("text", {"call": self.call, "delta": delta.delta}))
        return out

    def reported(self, event: dict[str, Any]) -> list[bytes]:
        out = []
        if not self.admitted:  # a tool reports progress: it runs
            self.admitted = True
            out.append(sse("admitted", {"status": "running"}))
        out.append(sse("progress", event))
        return out

    def state(self, turn: TurnRequest) -> list[bytes]:
        out = []
        if not self.admitted and turn.status is not TurnStatus.QUEUED:
            self.admitted = True
            out.append(sse("admitted", {"status": turn.status.value, "attempt": turn.attempt}))
        steps = self.store.steps(self.turn_id)
        # A tool call is stored as an intent before its tool runs and completed in place:
        # one seen running is watched until its result is there (else the watcher would
        # keep the running call's empty result as if it had failed).
        for step in steps:
            if step.seq in self.running and step.status != "intent":
                self.running.discard(step.seq)
                out.append(sse(*step_event(step)))
        for step in steps[self.steps_seen :]:
            if step.status == "intent":
                self.running.add(step.seq)
            out.append(sse(*step_event(step)))
        self.steps_seen = len(steps)
        if turn.status is TurnStatus.AWAITING_APPROVAL:
            out.extend(self._approvals())
        return out

    def _approvals(self) -> list[bytes]:
        out = []
        for approval in ApprovalBook(self.store).list("pending"):
            if approval.turn_id == self.turn_id and approval.id not in self.approvals_seen:
                self.approvals_seen.add(approval.id)
                params = redact(dict(approval.params))
                out.append(
                    sse(
                        "approval",
                        {
                            "approval_id": approval.id,
                            "tool": approval.tool,
                            "params": params,
                            "prompt": approval.prompt,
                        },
                    )
                )
        return out

    def finish(self, turn: TurnRequest) -> list[bytes]:
        out = []
        output = turn.output or ""
        if output and output != self.shown:
            if not output.startswith(self.shown):  # what streamed was not the answer
                self.call, self.shown = f"{self.call or 'output'}:final", ""
            delta = output[len(self.shown) :]
            out.append(sse("text", {"call": self.call or "output", "delta": delta}))
        out.append(
            sse(
                "finished",
                {
                    "turn_id": turn.id,
                    "status": turn.status.value,
                    "output": output_value(turn, self.agents),
                    "error": turn.error,
                    "outcome": turn.outcome,
                },
            )
        )
        return out


async def turn_events(runtime: Runtime, turn_id: str) -> AsyncIterator[bytes]:
    """The SSE byte stream of ``turn_id`` until it finishes (the turn must exist)."""
    inbox = runtime.inbox
    assert inbox is not None
    watch = TurnStreams.of(runtime).watch(turn_id)
    events = TurnEvents.of(runtime)
    reported = events.watch(turn_id)
    progress = _Progress(inbox.store, turn_id, runtime.agents)
    loop = asyncio.get_running_loop()
    last_sent = loop.time()
    try:
        while True:
            # Text first: every delta published before the turn's state changed is
            # already queued, so the final reconciliation sees all of it.
            chunks: list[bytes] = []
            try:
                delta: TextDelta | None = await asyncio.wait_for(watch.queue.get(), POLL_SECONDS)
            except TimeoutError:
                delta = None
            # A tool's progress first: it reports while its call runs, before the next
            # model call's text (within a turn, model calls and tool calls take turns).
            while not reported.empty():
                chunks += progress.reported(reported.get_nowait())
            while delta is not None:
                chunks += progress.text(delta)
                delta = None if watch.queue.empty() else watch.queue.get_nowait()
            turn = inbox.get(turn_id)
            chunks += progress.state(turn)
            if turn.status.is_terminal:
                for chunk in chunks + progress.finish(turn):
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
        events.close(turn_id, reported)
