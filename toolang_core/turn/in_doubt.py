"""Tool calls in doubt: started before a crash, with no result recorded.

A tool call is stored as an *intent* before the tool runs and completed with its result
after (``ExecutionStore.complete_step``). A turn resumed after a crash that finds an
intent without a result cannot know whether the tool's effect happened. The contract:

* an ``idempotent`` tool runs again, under the same idempotency key;
* any other tool is **not** run again: the model is told the call may already have run
  (``[tools] in_doubt = "tell_model"``, the default), or a person decides through an
  approval request (``"ask_person"``): approved, the call runs again; denied or expired,
  the model is told it was not.

The decision is recorded on the call's step (``data["in_doubt"]``) for the trace.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal

import attrs

from toolang_core.tools.types import Denied, Granted, ToolCall, ToolResult

Policy = Literal["tell_model", "ask_person"]
Decision = Literal["rerun", "told_model", "approved", "denied"]

ERROR_TYPE: Final = "in_doubt"


@attrs.frozen
class Doubt:
    """What was decided about one call in doubt.

    ``result`` is what the model sees instead of running the call (``None``: run it
    again); ``detail`` says why, for the trace; ``note`` what else is known (its program
    was found still running and killed at the runtime's start)."""

    decision: Decision
    intent_attempt: int
    detail: str
    result: ToolResult | None = None
    note: str | None = None

    @property
    def rerun(self) -> bool:
        return self.result is None

    def with_note(self, note: str) -> Doubt:
        """The same decision with ``note``, which the model is told too."""
        result = self.result
        if result is not None:
            result = attrs.evolve(result, error=f"{result.error} Also: {note}.")
        return attrs.evolve(self, note=note, result=result)

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "decision": self.decision,
            "intent_attempt": self.intent_attempt,
            "detail": self.detail,
        }
        if self.note is not None:
            found["note"] = self.note
        return found


def may_have_run(call: ToolCall, intent_attempt: int) -> str:
    """The message a model gets for a call in doubt that was not run again."""
    return (
        f"{call.name} may already have run: this call started in attempt {intent_attempt} of "
        "the turn, which was interrupted (the runtime stopped) before its result was "
        "recorded, so it is in doubt. It was NOT run again. Check whether its effect "
        "happened before repeating it."
    )


async def decide(
    call: ToolCall,
    *,
    idempotent: bool,
    intent_attempt: int,
    policy: Policy,
    ask_person: Callable[[str], Awaitable[Granted | Denied]],
) -> Doubt:
    """Decide what happens to ``call``, found in doubt (see the module docstring).

    ``ask_person(prompt)`` asks a person whether to run the call again (only with the
    ``ask_person`` policy, only for a tool that is not idempotent).
    """
    if idempotent:
        return Doubt("rerun", intent_attempt, "the tool is idempotent; same idempotency key")
    told = may_have_run(call, intent_attempt)
    if policy == "tell_model":
        return Doubt(
            "told_model",
            intent_attempt,
            "the tool is not idempotent",
            ToolResult(ok=False, error=told, error_type=ERROR_TYPE),
        )
    decision = await ask_person(
        f"{call.name} may already have run before the runtime stopped (attempt "
        f"{intent_attempt}); its result was never recorded. Run it again?"
    )
    if isinstance(decision, Granted):
        return Doubt("approved", intent_attempt, decision.reason or "a person approved")
    return Doubt(
        "denied",
        intent_attempt,
        decision.message,
        ToolResult(
            ok=False,
            error=f"{told} A person was asked whether to run it again: {decision.message}",
            error_type=ERROR_TYPE,
        ),
    )
