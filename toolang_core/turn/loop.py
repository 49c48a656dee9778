"""The agent loop: one agent answering within a turn.

    take steered input → model call → tool calls through the chain → … until a visible
    answer or a limit

A turn runs one loop; ``ask_agent`` runs another, nested, inside the tool call that
asked (one spawn level deeper, its steps recorded on the same turn under their own
idempotency keys). ``transfer_to_agent`` switches the loop's speaker: the rest of the
turn is answered by the target agent, with its instruction and its tools, and every
event stays in the same turn. Delegation rounds (``ask_agent`` and transfers) are
counted per turn and refused past the limit — in code, before the chain runs.

This module is the loop itself; a step's parts are beside it: the model call
(:mod:`toolang_core.turn.model_step`), each tool call (:mod:`toolang_core.turn.tool_step`)
and the answer that ends the loop (:mod:`toolang_core.turn.final_answer`).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import attrs

from toolang_core.execution.seam import TurnContext, TurnOutcome
from toolang_core.models.types import Message
from toolang_core.store.json_text import nul_written_out
from toolang_core.tools.approvals import canonical_params
from toolang_core.tools.types import ToolCall, ToolResult
from toolang_core.turn import escalation, output, prompt, trace
from toolang_core.turn.attachments import FileFitting, tool_attachments

# TurnFailed moved to toolang_core.turn.failure (what raises it need not import the
# loop); re-exported here for the older path.
from toolang_core.turn.failure import TurnFailed as TurnFailed  # noqa: PLC0414
from toolang_core.turn.final_answer import final_outcome
from toolang_core.turn.model_step import call_model
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
        self.invalid: list[str] = []  # what was wrong with each rejected typed answer
        self.answers: list[str] = []
        self.call_ids: set[str] = set()
        """Every tool-call id this loop has given out (a step's key spans the turn)."""
        # What the model step (turn/model_step.py) keeps of the prompts it sent:
        self.masked = trace.MaskedMessages()
        self.file_fitting = FileFitting()
        self.masked_by: dict[str, trace.MaskedMessages] = {}
        """The prompts of a model sent them fitted (a file it does not take left out)."""
        try:  # a replay's tool calls are answered from the record (turn/replay.py)
            self.replay = RecordedCalls.of(ctx.turn.meta)
        except BadReplay as exc:
            raise TurnFailed(str(exc), "agent_error") from None

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
            response = await call_model(self, step)
            if response.text.strip():
                self.answers.append(response.text)
            calls = self._with_ids(response.tool_calls, step)
            if not calls:
                final = await final_outcome(self, response.text, step, used_tools=used_tools)
                if final is None:
                    continue  # a typed answer sent back with its errors: the model tries again
                return self._end(final, step + 1)
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

    def _with_ids(self, calls: tuple[ToolCall, ...], step: int) -> tuple[ToolCall, ...]:
        """Give every call an id unique in its turn (stable across replays).

        A call's id keys its step, and a step's key spans the turn: a model that
        reuses an id, in one answer or in a later one, gets a new call under a new
        id, never the earlier call's recorded result."""
        out = []
        for index, call in enumerate(calls):
            # (a NUL written out, as every store keeps text: the id is a step's key)
            given = nul_written_out(call.call_id) if call.call_id else f"call-{step}-{index}"
            call_id = _unused(given, step, index, self.call_ids)
            self.call_ids.add(call_id)
            call_id = self.call_prefix + call_id
            out.append(attrs.evolve(call, call_id=call_id) if call_id != call.call_id else call)
        return tuple(out)

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


def _unused(call_id: str, step: int, index: int, used: set[str]) -> str:
    """``call_id``, or the first of its renamings no call of the turn has taken."""
    if call_id not in used:
        return call_id
    for candidate in (f"{call_id}-{index}", f"{call_id}-{step}-{index}"):
        if candidate not in used:
            return candidate
    n = 2
    while f"{call_id}-{step}-{index}-{n}" in used:
        n += 1
    return f"{call_id}-{step}-{index}-{n}"


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
