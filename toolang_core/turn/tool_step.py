"""One tool call of the agent loop (:mod:`toolang_core.turn.loop`): run through the
chain, replayed from an earlier attempt, answered from a replay's record, refused before
the chain (a delegation past the round limit, a ``request_tool`` outside the ceiling), or
decided when an earlier attempt left it in doubt.

The call's intent is stored before its tool runs and completed with the result after
(:mod:`toolang_core.turn.in_doubt`); a canceled turn's call is recorded as canceled.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any, Final, Protocol

import attrs
import structlog

from toolang_core.execution.seam import LEASE_LOST, SHUTDOWN
from toolang_core.store.json_text import check
from toolang_core.tools import process_ledger
from toolang_core.tools.chain import StageRecord
from toolang_core.tools.types import ToolCall, ToolCallContext, ToolResult
from toolang_core.turn import escalation, in_doubt, trace
from toolang_core.turn.attachments import as_given
from toolang_core.turn.in_doubt import Doubt
from toolang_core.turn.step_loop import StepLoop

if TYPE_CHECKING:
    from toolang_core.execution.seam import TurnContext
    from toolang_core.runtime_parts import CoreRuntime
    from toolang_core.store.types import StepRecord
    from toolang_core.tools.chain import ToolChain
    from toolang_core.tools.types import Denied, Granted, Pending
    from toolang_core.turn.replay import RecordedCalls

log = structlog.get_logger("toolang.turn")

TRANSFER: Final = "transfer_to_agent"
DELEGATION_TOOLS: Final = frozenset({"ask_agent", TRANSFER})
"""Tool calls that count as delegation rounds."""


class ToolStepExecutor(Protocol):
    """What a tool call asks of the agent executor (:class:`~toolang_core.turn.agent.AgentExecutor`
    is one). Named here, not the executor, which imports the loop that imports this module."""

    @property
    def runtime(self) -> CoreRuntime: ...

    @property
    def chain(self) -> ToolChain: ...

    async def await_approval(
        self, ctx: TurnContext, pending: Pending, call: ToolCall
    ) -> Granted | Denied: ...

    async def ask_person(
        self, ctx: TurnContext, call: ToolCall, prompt: str, *, agent: str, intent_attempt: int
    ) -> Granted | Denied: ...


class ToolStepLoop(StepLoop, Protocol):
    """What a tool call reads of the loop that makes it (:class:`~toolang_core.turn.loop.AgentLoop`
    is one; named here for the same reason)."""

    @property
    def executor(self) -> ToolStepExecutor: ...

    @property
    def escalating(self) -> escalation.Escalation | None: ...

    @property
    def replay(self) -> RecordedCalls | None: ...


async def run_tool_call(loop: ToolStepLoop, call: ToolCall) -> tuple[ToolCall, ToolResult]:
    """Run (or replay) one call; return it as it ran and its result.

    The call's intent is stored before its tool runs and completed with the result
    after; a call whose intent an earlier attempt left without a result is in doubt
    (:mod:`toolang_core.turn.in_doubt`)."""
    ctx, speaker = loop.ctx, loop.speaker
    key = f"{loop.key_prefix}:tool:{call.call_id}"
    done = ctx.find_step(key)
    if done is not None and done.status != "intent":
        # ran before this turn was interrupted: never run it twice
        if call.name in DELEGATION_TOOLS:
            loop.handle.take_round()  # replayed rounds still count
        replayed = trace.result_from_json(dict(done.data["result"]))
        if replayed.attachments:  # the files' names as sent before, not as masked
            given = as_given(loop.executor.runtime, ctx.store, ctx.turn.owner, replayed.attachments)
            replayed = attrs.evolve(replayed, attachments=given)
        return trace.call_from_json(dict(done.data["call"])), replayed
    if done is None and (recorded := _from_record(loop, call)) is not None:
        return _answered_from_record(loop, call, key, *recorded)
    tool_ctx = ToolCallContext(
        call=call,
        turn_id=ctx.turn.id,
        thread_id=ctx.turn.thread_id,
        run_id=ctx.run_id,
        agent=speaker.agent.name,
        spawn_depth=loop.spawn_depth,
        allowed_tools=speaker.allowed,
        runtime=loop.executor.runtime,
        turn=loop.handle,
        idempotency_key=key,
    )
    started = ctx.clock()
    doubt = None if done is None else await _in_doubt(loop, call, done)
    intent: list[StepRecord] = [] if done is None else [done]
    stages: tuple[StageRecord, ...]
    if doubt is not None and not doubt.rerun:
        assert doubt.result is not None
        as_run, result = call, doubt.result
        stages = (StageRecord("in_doubt", "not_run", None, doubt.detail),)
    elif (stopped := _stopped_before_chain(loop, call)) is not None:
        stage, refused = stopped
        chained = await loop.executor.chain.refuse(call, tool_ctx, refused, [stage])
        as_run, result, stages = call, chained.result, chained.stages
    else:

        def announce(as_run: ToolCall, _ctx: ToolCallContext) -> None:
            """The intent, durable before the tool runs (renewed for this attempt
            when an earlier one left it in doubt)."""
            data = _intent_data(loop, as_run, call, key)
            if intent:
                intent[0] = ctx.complete_step(intent[0], data=data, status="intent")
            else:
                intent.append(
                    ctx.record_step(
                        "tool_call",
                        data=data,
                        status="intent",
                        started_at=started,
                        idempotency_key=key,
                    )
                )

        try:
            chained = await loop.executor.chain.run(
                call,
                tool_ctx,
                wait_for_approval=lambda pending, c, _: loop.executor.await_approval(
                    ctx, pending, c
                ),
                before_execute=announce,
            )
        except asyncio.CancelledError:
            _record_canceled(loop, call, started, intent)
            raise
        as_run, result, stages = chained.call, chained.result, chained.stages
        result = escalation.unapproved(call.name, result, stages)
    data: dict[str, Any] = {
        "call": trace.call_json(as_run),
        "result": trace.result_json(result),
        "chain": trace.chain_json(stages),
        "agent": speaker.agent.name,
    }
    if dict(as_run.params) != dict(call.params):
        # Never the original parameters: a filter changed them to keep them out.
        data["params_modified"] = True
    if doubt is not None:
        data["in_doubt"] = doubt.to_json()
    return as_run, _stored(ctx, call.name, intent, data, result, started=started, key=key)


def _stored(
    ctx: TurnContext,
    tool: str,
    intent: list[StepRecord],
    data: dict[str, Any],
    result: ToolResult,
    *,
    started: float,
    key: str,
) -> ToolResult:
    """``result`` stored as the call's step (:func:`_store_result`); one whose output
    is not JSON is stored, and returned, as the error :func:`not_json` makes of it —
    found when it is stored, not checked before (a second encoding of every output)."""
    try:
        _store_result(ctx, intent, data, result, started=started, key=key)
    except (TypeError, ValueError) as exc:
        unstorable = not_json(tool, result, exc)
        if unstorable is None:
            raise
        data["result"] = trace.result_json(unstorable)
        _store_result(ctx, intent, data, unstorable, started=started, key=key)
        return unstorable
    return result


def _store_result(
    ctx: TurnContext,
    intent: list[StepRecord],
    data: dict[str, Any],
    result: ToolResult,
    *,
    started: float,
    key: str,
) -> None:
    """The call's step: its intent completed, or (refused before it could run: no
    intent) one insert; masked by the step writes (the redaction policy's choke point)."""
    status = "completed" if result.ok else "failed"
    if intent:
        ctx.complete_step(intent[0], data=data, status=status, error=result.error)
    else:
        ctx.record_step(
            "tool_call",
            data=data,
            started_at=started,
            idempotency_key=key,
            status=status,
            error=result.error,
        )


def not_json(tool: str, result: ToolResult, exc: BaseException) -> ToolResult | None:
    """The error result that replaces ``result`` when its output cannot be stored as
    JSON (a set, bytes, an object, a lone surrogate, NaN), naming the tool; ``None``
    when the output is JSON (``exc`` came from elsewhere). The tool ran: its call is
    recorded as failed, so it is never run again, and the model is told why."""
    try:
        check(result.output)  # as the store writes it
    except (TypeError, ValueError) as why:
        reason = str(why) or type(why).__name__
    else:
        return None
    log.warning("tool.output_not_json", tool=tool, error=f"{type(exc).__name__}: {exc}")
    return ToolResult(
        ok=False,
        error=(
            f"tool {tool!r} returned output that is not JSON ({reason}); it ran, but its "
            "output cannot be stored or shown: the tool must return JSON values (str, "
            "int, float, bool, None, lists and dicts with str keys)"
        ),
        error_type="ToolOutputError",
        duration_ms=result.duration_ms,
    )


def _from_record(loop: ToolStepLoop, call: ToolCall) -> tuple[ToolResult, StageRecord] | None:
    """In a replay, ``call``'s recorded result or its stop (``None``: it runs)."""
    return loop.replay.answer(call) if loop.replay is not None else None


def _answered_from_record(
    loop: ToolStepLoop, call: ToolCall, key: str, result: ToolResult, stage: StageRecord
) -> tuple[ToolCall, ToolResult]:
    """A replay's call answered from the record, or stopped: nothing ran, and the
    step says which (its chain is the one ``replay`` stage)."""
    data = {
        "call": trace.call_json(call),
        "result": trace.result_json(result),
        "chain": trace.chain_json((stage,)),
        "agent": loop.speaker.agent.name,
        "replay": stage.verdict,
    }
    status = "completed" if result.ok else "failed"
    loop.ctx.record_step(
        "tool_call", data=data, status=status, error=result.error, idempotency_key=key
    )
    return call, result


def _record_canceled(
    loop: ToolStepLoop, call: ToolCall, started: float, intent: list[StepRecord]
) -> None:
    """The trace shows a call its turn's cancellation stopped (a tool process is
    stopped with it); whatever the tool did after the cancellation is never recorded
    as its result. A turn only handed back (shutdown, a lost lease) records nothing:
    a call's intent stays as it is (the attempt that resumes it finds the call in
    doubt), and a call that had not started (waiting for its approval) is simply
    made again by that attempt."""
    slot = loop.ctx.slot
    why = slot.cancel_reason(loop.ctx.turn.id) if slot is not None else None
    if why in (SHUTDOWN, LEASE_LOST):
        return
    error = "canceled before it finished: its turn was canceled, interrupted or stopped"
    data = {
        "call": trace.call_json(call),
        "result": {"ok": False, "error": error, "error_type": "canceled"},
        "chain": [StageRecord("execute", "canceled", None, error).to_json()],
        "agent": loop.speaker.agent.name,
        "canceled": True,
    }
    # A lost lease or a store going away must not stop the cancellation.
    with contextlib.suppress(Exception):
        if intent:
            loop.ctx.complete_step(intent[0], data=data, status="failed", error=error)
        else:
            loop.ctx.record_step(
                "tool_call", data=data, started_at=started, status="failed", error=error
            )


def _stopped_before_chain(
    loop: ToolStepLoop, call: ToolCall
) -> tuple[StageRecord, ToolResult] | None:
    """A call the loop refuses before the chain runs, with its stage record: a
    delegation past the turn's round limit (stage ``limit``), a ``request_tool``
    asking outside the turn's ceiling (stage ``scope``: no approval is asked,
    :mod:`toolang_core.turn.escalation`). ``None``: the chain decides."""
    if call.name in DELEGATION_TOOLS and not loop.handle.take_round():
        refused = _rounds_used_up(loop)
        return StageRecord("limit", "refused", None, refused.error or ""), refused
    if call.name == escalation.REQUEST_TOOL and loop.escalating is not None:
        outside = loop.escalating.refusal(loop.speaker, call.params)
        if outside is not None:
            return StageRecord("scope", "refused", None, outside.error or ""), outside
    return None


def _rounds_used_up(loop: ToolStepLoop) -> ToolResult:
    return ToolResult(
        ok=False,
        error=(
            f"delegation round limit reached: this turn already used "
            f"{loop.handle.max_rounds} (ask_agent and transfer_to_agent); "
            "answer with what you have"
        ),
        error_type="limit",
    )


def _intent_data(loop: ToolStepLoop, as_run: ToolCall, asked: ToolCall, key: str) -> dict[str, Any]:
    data: dict[str, Any] = {
        "call": trace.call_json(as_run),
        "agent": loop.speaker.agent.name,
        "idempotency_key": key,
    }
    if dict(as_run.params) != dict(asked.params):
        data["params_modified"] = True
    return data


async def _in_doubt(loop: ToolStepLoop, call: ToolCall, intent: StepRecord) -> Doubt:
    """Decide about ``call``, which an earlier attempt started and never finished."""
    registration = loop.executor.chain.tools.get(call.name)
    doubt = await in_doubt.decide(
        call,
        idempotent=registration is not None and registration.tool.idempotent,
        intent_attempt=intent.attempt,
        policy=loop.executor.runtime.config.tools.in_doubt,
        ask_person=lambda prompt: loop.executor.ask_person(
            loop.ctx, call, prompt, agent=loop.speaker.agent.name, intent_attempt=intent.attempt
        ),
    )
    killed = process_ledger.take_note(loop.ctx.store, loop.ctx.turn.id, call.call_id)
    if killed is not None:  # the start-up sweep stopped what it left running
        doubt = doubt.with_note(killed)
    log.warning(
        "tool.in_doubt",
        turn=loop.ctx.turn.id,
        call=call.call_id,
        tool=call.name,
        intent_attempt=intent.attempt,
        attempt=loop.ctx.attempt,
        decision=doubt.decision,
    )
    return doubt
