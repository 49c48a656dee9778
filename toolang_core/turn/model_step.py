"""One model call of the agent loop (:mod:`toolang_core.turn.loop`): the prompt through
the input guards, fitted to each candidate model (files it does not take as text
references), sent with retries and fallbacks (:mod:`toolang_core.turn.model_retry`),
streamed to the turn's watchers when the model streams, and recorded as the
``model_call`` step; an earlier attempt's completed call is replayed, not made again.

:func:`guarded` is the loop's guard check, for the prompt here and for the final answer
(:mod:`toolang_core.turn.guards`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from toolang_core import spend as spend_rules
from toolang_core.errors import ModelError
from toolang_core.models.types import Message, ModelRequest, ModelResponse
from toolang_core.store.json_text import check
from toolang_core.turn import guards, output, trace
from toolang_core.turn.attachments import FileFitting
from toolang_core.turn.failure import TurnFailed
from toolang_core.turn.model_retry import Candidate, ModelAttempts, ModelCallFailed
from toolang_core.turn.step_loop import StepLoop

if TYPE_CHECKING:
    from toolang_core.runtime_parts import CoreRuntime
    from toolang_core.store.types import TurnRequest


class ModelStepExecutor(Protocol):
    """What a model call asks of the agent executor (:class:`~toolang_core.turn.agent.AgentExecutor`
    is one). Named here, not the executor, which imports the loop that imports this module."""

    @property
    def runtime(self) -> CoreRuntime: ...

    def outbound_headers(self, turn: TurnRequest, key: str) -> Mapping[str, str]: ...


class ModelStepLoop(StepLoop, Protocol):
    """What a model call reads of the loop that makes it (:class:`~toolang_core.turn.loop.AgentLoop`
    is one; named here for the same reason)."""

    @property
    def executor(self) -> ModelStepExecutor: ...

    @property
    def messages(self) -> list[Message]: ...

    @property
    def typed(self) -> output.OutputSpec | None: ...

    @property
    def file_fitting(self) -> FileFitting: ...

    @property
    def masked(self) -> trace.MaskedMessages: ...

    @property
    def masked_by(self) -> dict[str, trace.MaskedMessages]: ...


async def call_model(loop: ModelStepLoop, step: int) -> ModelResponse:
    """The model's answer at ``step`` (an earlier attempt's, replayed, when it made the
    call). :raises TurnFailed: past a spend limit, a guard's refusal, a failed call."""
    ctx, speaker = loop.ctx, loop.speaker
    key = f"{loop.key_prefix}:model:{step}"
    done = ctx.find_step(key)
    spend = loop.handle.spend
    if done is not None and done.status == "completed":
        replayed = trace.response_from_json(dict(done.data["response"]))
        spend.add(spend_rules.tokens_of(replayed.usage))  # an earlier attempt's call counts
        return replayed
    stop = spend.check()
    if stop is not None:
        raise TurnFailed(stop.message, stop.outcome)
    sent = await guarded(loop, guards.INPUT_HOOK, tuple(loop.messages), step)
    started = ctx.clock()
    data: dict[str, Any] = {"model": speaker.model_name, "agent": speaker.agent.name}
    prepared: dict[str, tuple[tuple[Message, ...], dict[str, Any]]] = {}

    def sent_to(candidate: Candidate) -> tuple[tuple[Message, ...], dict[str, Any]]:
        """The prompt as ``candidate`` is sent it (files it does not take as text
        references), and what its step says of it: the messages, and per file
        whether it was attached."""
        known = prepared.get(candidate.name)
        if known is None:
            fitted, files = loop.file_fitting.fit(candidate.model, candidate.name, sent)
            masked = loop.masked if fitted is sent else _masked_for(loop, candidate.name)
            request_json, truncated = masked.json(fitted)
            shown: dict[str, Any] = {"messages": request_json, "truncated": truncated}
            if files:
                shown["files"] = [f.to_json() for f in files]
            known = prepared[candidate.name] = (fitted, shown)
        return known

    request = ModelRequest(
        messages=sent,
        tools=speaker.specs,
        model_id=speaker.model_id,
        key=key,
        headers=loop.executor.outbound_headers(ctx.turn, key),
        output_schema=loop.typed.schema if loop.typed is not None else None,
    )

    async def call(candidate: Candidate) -> ModelResponse:
        # Files tools gave back, as this model takes them (a text reference if not).
        fitted = sent_to(candidate)[0]
        asked = request if fitted is sent else attrs.evolve(request, messages=fitted)
        if candidate.name != speaker.model_name:  # a fallback: its own model id
            asked = attrs.evolve(asked, model_id=candidate.name.partition("/")[2] or None)
        stream = getattr(candidate.model, "stream", None)
        if stream is None:
            response: ModelResponse = await candidate.model.complete(asked)
        else:
            response = await _streamed(loop, stream, asked, key)
        return _storable(response, candidate.name)

    attempts = ModelAttempts(
        ctx,
        key=key,
        config=loop.executor.runtime.config.models.retry,
        candidates=(Candidate(speaker.model_name, speaker.model), *speaker.fallbacks),
        call=call,
        data=data,
        shown=lambda candidate: sent_to(candidate)[1],
    )
    try:
        answered, response = await attempts.run()
    except ModelCallFailed as exc:
        raise TurnFailed(str(exc), "model_error") from None
    data.update(sent_to(answered)[1])
    data["model"] = answered.name
    data["response"] = trace.response_json(response)
    tokens = spend_rules.tokens_of(response.usage) if response.usage else {}
    if tokens:
        data["tokens"] = tokens  # normalised: what the store sums
    spend.add(tokens)
    ctx.defer_step("model_call", started_at=started, idempotency_key=key, data=data)
    return response


def _storable(response: ModelResponse, model: str) -> ModelResponse:
    """``response`` checked to be storable (:func:`toolang_core.store.json_text.check`):
    its text, its tool calls' parameters and its usage (a provider's ``NaN``, which
    ``json.loads`` reads, or a lone surrogate is not). An answer the store would refuse
    fails the model's attempt, named, rather than the turn's commit (which left it
    running until its lease ran out)."""
    try:
        response.text.encode()
    except UnicodeEncodeError as exc:
        raise ModelError(f"model {model!r} answered text that is not UTF-8: {exc}") from None
    for call in response.tool_calls:
        try:
            check(call.params, mappings=True)
        except (TypeError, ValueError) as exc:
            raise ModelError(
                f"model {model!r} asked for tool {call.name!r} with parameters that are not "
                f"JSON: {exc}"
            ) from None
    if response.usage:
        try:
            check(response.usage, mappings=True)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"model {model!r} reported usage that is not JSON: {exc}") from None
    return response


async def guarded(loop: ModelStepLoop, hook: str, value: Any, step: int) -> Any:
    """``value`` (the prompt, or the final answer) as the guards of ``hook`` leave
    it (:mod:`toolang_core.turn.guards`); a rewrite or refusal is in the trace.

    :raises TurnFailed: outcome ``guardrail``, when a guard refused.
    """
    hooks, speaker = loop.executor.runtime.hooks, loop.speaker
    if not hooks.callers(hook):
        return value  # no guard installed: most loops
    guard_ctx = guards.GuardContext(
        turn_id=loop.ctx.turn.id,
        thread_id=loop.ctx.turn.thread_id,
        run_id=loop.ctx.run_id,
        agent=speaker.agent.name,
        model=speaker.model_name,
        spawn_depth=loop.spawn_depth,
        step=step,
        runtime=loop.executor.runtime,
    )
    is_input = hook == guards.INPUT_HOOK
    check = guards.check_input if is_input else guards.check_output
    outcome = await check(hooks, value, guard_ctx)
    key = f"{loop.key_prefix}:guard:{'input' if is_input else 'output'}:{step}"
    guards.record(loop.ctx, outcome, hook=hook, key=key, agent=speaker.agent.name)
    if outcome.refused is not None:
        raise TurnFailed(outcome.error("input" if is_input else "answer"), guards.GUARDRAIL)
    return outcome.value


async def _streamed(
    loop: ModelStepLoop, stream: Any, request: ModelRequest, key: str
) -> ModelResponse:
    """A streaming model's call: each delta goes to the turn's watchers as it comes."""
    from toolang_core.turn.streaming import TurnStreams, stream_response

    streams = TurnStreams.of(loop.executor.runtime)
    turn_id = loop.ctx.turn.id
    streams.begin(turn_id, key)
    try:
        return await stream_response(
            stream, request, lambda delta: streams.publish(turn_id, key, delta)
        )
    finally:
        streams.end(turn_id, key)


def _masked_for(loop: ModelStepLoop, model_name: str) -> trace.MaskedMessages:
    """The stored prompts of ``model_name`` when it is sent them fitted."""
    masked = loop.masked_by.get(model_name)
    if masked is None:
        masked = loop.masked_by[model_name] = trace.MaskedMessages()
    return masked
