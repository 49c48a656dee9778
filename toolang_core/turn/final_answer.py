"""How the agent loop (:mod:`toolang_core.turn.loop`) ends on a model answer without tool
calls: the visible answer, a typed one checked against its schema first
(:mod:`toolang_core.turn.output`; a rejected one is sent back to the model while attempts
are left), then through the output guards; or an empty-answer outcome.
"""

from __future__ import annotations

from typing import Any, Protocol

from toolang_core.execution.seam import TurnOutcome
from toolang_core.models.types import Message
from toolang_core.tools.validate import SchemaError
from toolang_core.turn import guards, output
from toolang_core.turn.model_step import ModelStepExecutor, ModelStepLoop, guarded


class FinalAnswerExecutor(ModelStepExecutor, Protocol):
    """What the final answer asks of the agent executor besides what a model call does
    (:class:`~toolang_core.turn.agent.AgentExecutor` is one)."""

    @property
    def output_checker(self) -> output.OutputChecker: ...


class FinalAnswerLoop(ModelStepLoop, Protocol):
    """What the final answer reads of its loop besides what a model call does
    (:class:`~toolang_core.turn.loop.AgentLoop` is one)."""

    @property
    def executor(self) -> FinalAnswerExecutor: ...

    @property
    def answers(self) -> list[str]:
        """Every non-empty answer so far; the last one is the one ending the loop."""

    @property
    def invalid(self) -> list[str]:
        """What was wrong with each rejected typed answer."""


async def final_outcome(
    loop: FinalAnswerLoop, text: str, step: int, *, used_tools: bool
) -> TurnOutcome | None:
    """How the loop ends on an answer without tool calls: the visible answer (a typed
    one checked first), or an empty-answer outcome; ``None`` when a typed answer
    was sent back to the model."""
    if text.strip():
        answer = text
        if loop.typed is not None:
            checked = _typed_answer(loop, loop.typed, answer, step)
            if checked is None or isinstance(checked, TurnOutcome):
                return checked
            answer = checked
        answer = await guarded(loop, guards.OUTPUT_HOOK, answer, step)
        loop.answers[-1] = answer
        return TurnOutcome.completed(answer)
    if used_tools:
        return TurnOutcome.failed(
            "the agent used tools but gave no visible answer",
            outcome="empty_after_tool_use",
        )
    return TurnOutcome.failed("the model gave an empty answer", "empty_answer")


def _typed_answer(
    loop: FinalAnswerLoop, spec: output.OutputSpec, text: str, step: int
) -> str | TurnOutcome | None:
    """``text`` checked against ``spec``: its JSON text when valid; ``None`` when it
    was sent back to the model (the errors appended to the conversation); a failed
    outcome (``invalid_output``) when no attempt is left.

    Each check is an ``output_check`` step. A rejected one is stored at once (with
    the model call before it): a turn resumed after a crash replays both and counts
    the attempt; a valid one goes with the turn's terminal state."""
    try:
        checked = loop.executor.output_checker.check(spec, text)
    except SchemaError as exc:
        return TurnOutcome.failed(str(exc), outcome="agent_error")
    attempt = len(loop.invalid) + 1
    key = f"{loop.key_prefix}:output:{step}"
    known = loop.ctx.find_step(key) is not None
    data: dict[str, Any] = {
        "attempt": attempt,
        "attempts": spec.attempts,
        "schema_from": spec.origin,
        "valid": checked.problem is None,
        "agent": loop.speaker.agent.name,
    }
    if checked.problem is None:
        if not known:
            loop.ctx.defer_step(output.STEP_KIND, data=data, idempotency_key=key)
        return checked.json_text
    loop.invalid.append(checked.problem)
    data["errors"] = [checked.problem]
    if not known:
        loop.ctx.record_step(
            output.STEP_KIND,
            data=data,
            status="failed",
            error=checked.problem,
            idempotency_key=key,
        )
    if attempt >= spec.attempts:
        return TurnOutcome.failed(
            output.failure_message(spec, loop.invalid), outcome=output.INVALID_OUTPUT
        )
    loop.messages.append(Message(role="assistant", content=text))
    loop.messages.append(output.retry_message(spec, checked.problem, attempt))
    return None
