"""The agent loop: one agent answering within a turn.

    take steered input → model call → tool calls through the chain → … until a visible
    answer or a limit

A turn runs one loop; ``ask_agent`` runs another, nested, inside the tool call that
asked (one spawn level deeper, its steps recorded on the same turn under their own
idempotency keys). ``transfer_to_agent`` switches the loop's speaker: the rest of the
turn is answered by the target agent, with its instruction and its tools, and every
event stays in the same turn. Delegation rounds (``ask_agent`` and transfers) are
counted per turn and refused past the limit — in code, before the chain runs.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import attrs

from toolang_core import spend as spend_rules
from toolang_core.execution.seam import TurnContext, TurnOutcome
from toolang_core.models.types import Message, ModelRequest, ModelResponse
from toolang_core.tools.approvals import canonical_params
from toolang_core.tools.types import ToolCall, ToolResult
from toolang_core.tools.validate import SchemaError
from toolang_core.turn import escalation, guards, output, prompt, trace
from toolang_core.turn.attachments import FileFitting, tool_attachments

# TurnFailed moved to toolang_core.turn.failure (what raises it need not import the
# loop); re-exported here for the older path.
from toolang_core.turn.failure import TurnFailed as TurnFailed  # noqa: PLC0414
from toolang_core.turn.model_retry import Candidate, ModelAttempts, ModelCallFailed
from toolang_core.turn.replay import BadReplay, RecordedCalls

# Speaker moved to toolang_core.turn.speaker (a running turn names it without the loop);
# re-exported here for the older path.
from toolang_core.turn.speaker import Speaker as Speaker  # noqa: PLC0414

# The tool-call names moved with the tool calls to toolang_core.turn.tool_step;
# re-exported here for the older path.
from toolang_core.turn.tool_step import (
    DELEGATION_TOOLS as DELEGATION_TOOLS,  # noqa: PLC0414
    TRANSFER as TRANSFER,  # noqa: PLC0414
    run_tool_call,
)

if TYPE_CHECKING:
    from toolang_core.turn.agent import AgentExecutor
    from toolang_core.turn.running import RunningTurn


@attrs.frozen
class LoopEnd:
    """How a loop ended: the outcome, who answered last, and every non-empty answer."""

    outcome: TurnOutcome
    speaker: Speaker
    answers: tuple[str, ...]
    model_calls: int


class AgentLoop:
    """One run of the loop. ``key_prefix`` prefixes its steps' idempotency keys
    (``<turn id>`` for the turn's own loop); ``call_prefix`` its tool-call ids (so a
    nested loop's approvals never collide with the outer loop's)."""

    def __init__(
        self,
        executor: AgentExecutor,
        ctx: TurnContext,
        handle: RunningTurn,
        speaker: Speaker,
        messages: list[Message],
        *,
        key_prefix: str,
        spawn_depth: int,
        max_steps: int,
        call_prefix: str = "",
        steerable: bool = True,
        typed: output.OutputSpec | None = None,
        escalating: escalation.Escalation | None = None,
    ) -> None:
        self.executor = executor
        self.escalating = escalating  # what request_tool may ask for (the turn's own loop)
        self.ctx = ctx
        self.handle = handle
        self.speaker = speaker
        self.messages = messages
        self.key_prefix = key_prefix
        self.spawn_depth = spawn_depth
        self.max_steps = max_steps
        self.call_prefix = call_prefix
        self.steerable = steerable
        self.typed = typed
        self._invalid: list[str] = []  # what was wrong with each rejected typed answer
        self.answers: list[str] = []
        self._masked = trace.MaskedMessages()
        self._files = FileFitting()
        self._masked_by: dict[str, trace.MaskedMessages] = {}
        """The prompts of a model sent them fitted (a file it does not take left out)."""
        try:  # a replay's tool calls are answered from the record (turn/replay.py)
            self.replay = RecordedCalls.of(ctx.turn.meta)
        except BadReplay as exc:
            raise TurnFailed(str(exc), "agent_error") from None

    def _masked_for(self, model_name: str) -> trace.MaskedMessages:
        """The stored prompts of ``model_name`` when it is sent them fitted."""
        masked = self._masked_by.get(model_name)
        if masked is None:
            masked = self._masked_by[model_name] = trace.MaskedMessages()
        return masked

    def _end(self, outcome: TurnOutcome, calls: int) -> LoopEnd:
        return LoopEnd(outcome, self.speaker, tuple(self.answers), calls)

    async def run(self) -> LoopEnd:
        loop_repeats = self.executor.runtime.config.agents.loop_repeats
        seen: Counter[tuple[tuple[str, str], ...]] = Counter()
        used_tools = False
        for step in range(self.max_steps):
            if self.steerable:  # steering reaches the turn's own loop only
                for steered in self.ctx.take_steer():
                    self.messages.append(Message(role="user", content=steered.input))
            response = await self._model_call(step)
            if response.text.strip():
                self.answers.append(response.text)
            calls = self._with_ids(response.tool_calls, step)
            if not calls:
                end = await self._final(response.text, step, used_tools=used_tools)
                if end is None:
                    continue  # a typed answer sent back with its errors: the model tries again
                return end
            used_tools = True
            stop = self.handle.spend.check()  # this answer's usage may reach a limit
            if stop is not None:  # … then none of its tool calls is made
                return self._end(TurnOutcome.failed(stop.message, stop.outcome), step + 1)
            signature = tuple(sorted((c.name, canonical_params(c.params)) for c in calls))
            seen[signature] += 1
            if seen[signature] >= loop_repeats:
                names = ", ".join(c.name for c in calls)
                looped = TurnOutcome.failed(
                    f"the model asked for the same tool call(s) ({names}) "
                    f"{seen[signature]} times; stopped",
                    outcome="loop_detected",
                )
                return self._end(looped, step + 1)
            # The history keeps each call as it ran: a security filter's changes
            # (e.g. masked personal data) reach the next prompt and its trace.
            ran, replies, handoff = [], [], None
            for call in calls:
                as_run, result = await run_tool_call(self, call)
                if as_run.name == escalation.REQUEST_TOOL:  # granted: usable from now on
                    self.speaker = escalation.granted(
                        self.speaker, self.escalating, result, self.executor.chain.tools
                    )
                ran.append(as_run)
                files, missing = tool_attachments(
                    self.executor.runtime, self.ctx.store, self.ctx.turn.owner, result.attachments
                )
                replies.append(prompt.tool_message(call.call_id, call.name, result, files, missing))
                handoff = handoff or _handoff(as_run, result)
            self.messages.append(
                Message(role="assistant", content=response.text, tool_calls=tuple(ran))
            )
            self.messages.extend(replies)
            if handoff is not None:
                self._transfer(handoff[0], handoff[1])
        exhausted = TurnOutcome.failed(
            f"no final answer after {self.max_steps} model calls", outcome="max_steps"
        )
        return self._end(exhausted, self.max_steps)

    async def _final(self, text: str, step: int, *, used_tools: bool) -> LoopEnd | None:
        """How the loop ends on an answer without tool calls: the visible answer (a typed
        one checked first), or an empty-answer outcome; ``None`` when a typed answer
        was sent back to the model."""
        if text.strip():
            answer = text
            if self.typed is not None:
                checked = self._typed_answer(self.typed, answer, step)
                if checked is None:
                    return None
                if isinstance(checked, TurnOutcome):
                    return self._end(checked, step + 1)
                answer = checked
            answer = await self._checked(guards.OUTPUT_HOOK, answer, step)
            self.answers[-1] = answer
            return self._end(TurnOutcome.completed(answer), step + 1)
        if used_tools:
            failed = TurnOutcome.failed(
                "the agent used tools but gave no visible answer",
                outcome="empty_after_tool_use",
            )
            return self._end(failed, step + 1)
        empty = TurnOutcome.failed("the model gave an empty answer", "empty_answer")
        return self._end(empty, step + 1)

    def _with_ids(self, calls: tuple[ToolCall, ...], step: int) -> tuple[ToolCall, ...]:
        """Give every call an id unique in its turn (stable across replays)."""
        seen: set[str] = set()
        out = []
        for index, call in enumerate(calls):
            call_id = call.call_id or f"call-{step}-{index}"
            if call_id in seen:
                call_id = f"{call_id}-{index}"
            seen.add(call_id)
            call_id = self.call_prefix + call_id
            out.append(attrs.evolve(call, call_id=call_id) if call_id != call.call_id else call)
        return tuple(out)

    # -- a typed answer -------------------------------------------------------------------

    def _typed_answer(
        self, spec: output.OutputSpec, text: str, step: int
    ) -> str | TurnOutcome | None:
        """``text`` checked against ``spec``: its JSON text when valid; ``None`` when it
        was sent back to the model (the errors appended to the conversation); a failed
        outcome (``invalid_output``) when no attempt is left.

        Each check is an ``output_check`` step. A rejected one is stored at once (with
        the model call before it): a turn resumed after a crash replays both and counts
        the attempt; a valid one goes with the turn's terminal state."""
        try:
            checked = self.executor.output_checker.check(spec, text)
        except SchemaError as exc:
            return TurnOutcome.failed(str(exc), outcome="agent_error")
        attempt = len(self._invalid) + 1
        key = f"{self.key_prefix}:output:{step}"
        known = self.ctx.find_step(key) is not None
        data: dict[str, Any] = {
            "attempt": attempt,
            "attempts": spec.attempts,
            "schema_from": spec.origin,
            "valid": checked.problem is None,
            "agent": self.speaker.agent.name,
        }
        if checked.problem is None:
            if not known:
                self.ctx.defer_step(output.STEP_KIND, data=data, idempotency_key=key)
            return checked.json_text
        self._invalid.append(checked.problem)
        data["errors"] = [checked.problem]
        if not known:
            self.ctx.record_step(
                output.STEP_KIND,
                data=data,
                status="failed",
                error=checked.problem,
                idempotency_key=key,
            )
        if attempt >= spec.attempts:
            return TurnOutcome.failed(
                output.failure_message(spec, self._invalid), outcome=output.INVALID_OUTPUT
            )
        self.messages.append(Message(role="assistant", content=text))
        self.messages.append(output.retry_message(spec, checked.problem, attempt))
        return None

    # -- one model call -------------------------------------------------------------------

    async def _model_call(self, step: int) -> ModelResponse:
        ctx, speaker = self.ctx, self.speaker
        key = f"{self.key_prefix}:model:{step}"
        done = ctx.find_step(key)
        spend = self.handle.spend
        if done is not None and done.status == "completed":
            replayed = trace.response_from_json(dict(done.data["response"]))
            spend.add(spend_rules.tokens_of(replayed.usage))  # an earlier attempt's call counts
            return replayed
        stop = spend.check()
        if stop is not None:
            raise TurnFailed(stop.message, stop.outcome)
        sent = await self._checked(guards.INPUT_HOOK, tuple(self.messages), step)
        started = ctx.clock()
        data: dict[str, Any] = {"model": speaker.model_name, "agent": speaker.agent.name}
        prepared: dict[str, tuple[tuple[Message, ...], dict[str, Any]]] = {}

        def sent_to(candidate: Candidate) -> tuple[tuple[Message, ...], dict[str, Any]]:
            """The prompt as ``candidate`` is sent it (files it does not take as text
            references), and what its step says of it: the messages, and per file
            whether it was attached."""
            known = prepared.get(candidate.name)
            if known is None:
                fitted, files = self._files.fit(candidate.model, candidate.name, sent)
                masked = self._masked if fitted is sent else self._masked_for(candidate.name)
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
            headers=self.executor.outbound_headers(ctx.turn, key),
            output_schema=self.typed.schema if self.typed is not None else None,
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
                return response
            return await self._streamed(stream, asked, key)

        attempts = ModelAttempts(
            ctx,
            key=key,
            config=self.executor.runtime.config.models.retry,
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

    async def _checked(self, hook: str, value: Any, step: int) -> Any:
        """``value`` (the prompt, or the final answer) as the guards of ``hook`` leave
        it (:mod:`toolang_core.turn.guards`); a rewrite or refusal is in the trace.

        :raises TurnFailed: outcome ``guardrail``, when a guard refused.
        """
        hooks, speaker = self.executor.runtime.hooks, self.speaker
        if not hooks.callers(hook):
            return value  # no guard installed: most loops
        guard_ctx = guards.GuardContext(
            turn_id=self.ctx.turn.id,
            thread_id=self.ctx.turn.thread_id,
            run_id=self.ctx.run_id,
            agent=speaker.agent.name,
            model=speaker.model_name,
            spawn_depth=self.spawn_depth,
            step=step,
            runtime=self.executor.runtime,
        )
        is_input = hook == guards.INPUT_HOOK
        check = guards.check_input if is_input else guards.check_output
        outcome = await check(hooks, value, guard_ctx)
        key = f"{self.key_prefix}:guard:{'input' if is_input else 'output'}:{step}"
        guards.record(self.ctx, outcome, hook=hook, key=key, agent=speaker.agent.name)
        if outcome.refused is not None:
            raise TurnFailed(outcome.error("input" if is_input else "answer"), guards.GUARDRAIL)
        return outcome.value

    async def _streamed(self, stream: Any, request: ModelRequest, key: str) -> ModelResponse:
        """A streaming model's call: each delta goes to the turn's watchers as it comes."""
        from toolang_core.turn.streaming import TurnStreams, stream_response

        streams = TurnStreams.of(self.executor.runtime)
        turn_id = self.ctx.turn.id
        streams.begin(turn_id, key)
        try:
            return await stream_response(
                stream, request, lambda delta: streams.publish(turn_id, key, delta)
            )
        finally:
            streams.end(turn_id, key)

    # -- transfer -------------------------------------------------------------------------

    def _transfer(self, call: ToolCall, target: str) -> None:
        """The rest of the turn is answered by ``target`` (its instruction, its tools)."""
        source = self.speaker.agent.name
        self.speaker = self.executor.speaker_for(
            self.executor.agent(target), _allowed(self.ctx), lenient=True
        )
        notes = [f"Agent {source!r} transferred this turn to you; continue it."]
        if self.typed is not None:  # the turn's answer keeps its form
            notes.append(output.schema_note(self.typed.schema))
        self.messages[0] = prompt.system_message(self.speaker.agent, self.ctx.turn, notes=notes)
        key = f"{self.key_prefix}:transfer:{call.call_id}"
        if self.ctx.find_step(key) is None:
            self.ctx.record_step(
                "transfer",
                data={"from": source, "to": target, "call_id": call.call_id, "agent": target},
                idempotency_key=key,
            )


def _handoff(call: ToolCall, result: ToolResult) -> tuple[ToolCall, str] | None:
    """``(call, target agent)`` when ``call`` is a transfer that went through."""
    output = result.output
    if (
        call.name == TRANSFER
        and result.ok
        and isinstance(output, dict)
        and output.get("transfer_type") == "agent_handoff"
    ):
        return call, str(output["target_agent"])
    return None


def _allowed(ctx: TurnContext) -> list[str] | None:
    value = ctx.turn.meta.get("allowed_tools")
    return [str(v) for v in value] if isinstance(value, list | tuple) else None
