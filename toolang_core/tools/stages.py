"""The hook stages of a tool call: what each stage asks its plugins and what it makes of
the answers.

    SecurityFilter (call) → ApprovalGate → [the tool runs] → SecurityFilter (result)
        → LearningObserver → KnowledgeSaver → EventPublisher

Each stage calls its hook through the facade's generic runners
(:meth:`~toolang_core.plugins.facade.Hooks.in_turn`,
:meth:`~toolang_core.plugins.facade.Hooks.each_of`) by the hook's calling rule
(:data:`~toolang_core.hookspecs.rules.HOOK_RULES`), and turns a fail-closed refusal
into the stage's own answer: a block, a denial, a withheld result.
:class:`~toolang_core.tools.chain.ToolChain` runs the stages in order and records them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core.hookspecs import TOOL_CHAIN
from toolang_core.hookspecs.rules import HookFailure, Refused
from toolang_core.tools.types import (
    ApprovalDecision,
    AskApproval,
    Block,
    Denied,
    FilterVerdict,
    Granted,
    Modify,
    Observe,
    Pending,
    ToolCall,
    ToolCallContext,
    ToolResult,
)

if TYPE_CHECKING:
    from toolang_core.plugins.facade import Hooks

OBSERVING_HOOKS: Final = TOOL_CHAIN[TOOL_CHAIN.index("toolang_filter_tool_result") + 1 :]
"""The chain's hooks after the result filter (LearningObserver, KnowledgeSaver,
EventPublisher), in chain order."""
AUDITING_HOOKS: Final = ("toolang_observe_tool_result", "toolang_publish_event")
"""The observing hooks a refused call reaches (nothing ran: no knowledge to save)."""


@attrs.frozen
class FilterOutcome:
    """What the SecurityFilter stage decided.

    ``call`` carries the parameters after every ``Modify``; ``verdicts`` lists each
    non-abstaining filter's verdict in order; ``blocked`` is set when one blocked.
    """

    call: ToolCall
    verdicts: tuple[tuple[str, FilterVerdict], ...] = ()
    blocked: tuple[str, Block] | None = None
    failures: tuple[HookFailure, ...] = ()


@attrs.frozen
class ApprovalOutcome:
    """The deciding gate and its decision (``None`` plugin: every gate abstained)."""

    plugin: str | None
    decision: ApprovalDecision | None
    failures: tuple[HookFailure, ...] = ()


_VERDICTS: Final = (Block, Modify, Observe, AskApproval)
_DECISIONS: Final = (Granted, Denied, Pending)


def _unexpected(hook: str, answer: object, expected: tuple[type, ...]) -> str:
    names = ", ".join(t.__name__ for t in expected)
    return f"{hook} answered {answer!r}; expected one of {names} (from toolang_core) or None"


NO_DECISION: Final = ApprovalOutcome(None, None)
"""Every gate abstained (most tool calls): one frozen value, not one per call."""


async def filter_tool_call(hooks: Hooks, call: ToolCall, ctx: ToolCallContext) -> FilterOutcome:
    """Ask every SecurityFilter in turn until one blocks.

    A filter that raises blocks the call: a broken security filter fails closed.
    """
    if not hooks.callers("toolang_filter_tool_call"):
        return FilterOutcome(call)  # no filter: the common bare chain, no coroutine
    verdicts: list[tuple[str, FilterVerdict]] = []
    kwargs: dict[str, Any] = {"call": call, "ctx": ctx}

    def take(plugin: str, answers: list[Any]) -> tuple[str, Block] | None:
        for verdict in answers:
            if verdict is None:
                continue
            if not isinstance(verdict, _VERDICTS):  # a wrong answer blocks, like a raise
                raise TypeError(_unexpected("toolang_filter_tool_call", verdict, _VERDICTS))
            verdicts.append((plugin, verdict))
            if isinstance(verdict, Block):
                return plugin, verdict
            params = verdict.params if isinstance(verdict, Modify | AskApproval) else None
            if params is not None:
                changed = attrs.evolve(kwargs["call"], params=dict(params))
                kwargs["call"], kwargs["ctx"] = changed, attrs.evolve(kwargs["ctx"], call=changed)
        return None

    ended, failures = await hooks.in_turn("toolang_filter_tool_call", kwargs, take)
    if isinstance(ended, Refused):
        ended = ended.plugin, Block(f"security filter {ended.plugin!r} failed: {ended.error}")
    return FilterOutcome(kwargs["call"], tuple(verdicts), ended, tuple(failures))


async def approve_tool_call(hooks: Hooks, call: ToolCall, ctx: ToolCallContext) -> ApprovalOutcome:
    """Ask the ApprovalGates in turn; the first decision wins.

    A gate that raises denies the call: a broken gate fails closed.
    """
    if not hooks.callers("toolang_approve_tool_call"):
        return NO_DECISION

    def take(plugin: str, answers: list[Any]) -> ApprovalOutcome | None:
        for decision in answers:
            if decision is None:
                continue
            if not isinstance(decision, _DECISIONS):  # a wrong answer denies, like a raise
                raise TypeError(_unexpected("toolang_approve_tool_call", decision, _DECISIONS))
            return ApprovalOutcome(plugin, decision)
        return None

    kwargs = {"call": call, "ctx": ctx}
    ended, failures = await hooks.in_turn("toolang_approve_tool_call", kwargs, take)
    if isinstance(ended, Refused):
        denied = Denied(f"approval gate {ended.plugin!r} failed: {ended.error}")
        return ApprovalOutcome(ended.plugin, denied, tuple(failures))
    return NO_DECISION if ended is None else ended


async def filter_tool_result(
    hooks: Hooks, call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> tuple[ToolResult, tuple[tuple[str, str], ...], tuple[HookFailure, ...]]:
    """Let every result filter replace the result in turn; ``(result, changed-by
    (plugin, reason) pairs, failures)``. A filter that raises fails closed."""
    if not hooks.callers("toolang_filter_tool_result"):
        return result, (), ()
    changed: list[tuple[str, str]] = []
    kwargs: dict[str, Any] = {"call": call, "result": result, "ctx": ctx}

    def take(plugin: str, answers: list[Any]) -> None:
        for replacement in answers:
            if replacement is not None:
                if not isinstance(replacement, ToolResult):  # withheld, like a raise
                    raise TypeError(
                        _unexpected("toolang_filter_tool_result", replacement, (ToolResult,))
                    )
                kwargs["result"] = replacement
                changed.append((plugin, "modified the result"))

    ended, failures = await hooks.in_turn("toolang_filter_tool_result", kwargs, take)
    if isinstance(ended, Refused):
        withheld = ToolResult(
            ok=False,
            error=f"result withheld: security filter {ended.plugin!r} failed ({ended.error})",
            error_type="filter_failed",
        )
        return withheld, tuple(changed), tuple(failures)
    return kwargs["result"], tuple(changed), ()


async def observe_tool_result(
    hooks: Hooks, call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> list[tuple[str, HookFailure | None]]:
    """Every LearningObserver, each isolated; ``(plugin, failure or None)`` for each."""
    kwargs = {"call": call, "result": result, "ctx": ctx}
    outcomes = await hooks.each_of(("toolang_observe_tool_result",), kwargs)
    return [(plugin, failure) for _, plugin, failure in outcomes]


async def after_tool_call(
    hooks: Hooks, call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> list[tuple[str, str, HookFailure | None]]:
    """The observing stages of the chain in order — every LearningObserver, then
    every KnowledgeSaver, then every EventPublisher — each implementation isolated;
    ``(hook, plugin, failure or None)`` for each."""
    return await hooks.each_of(OBSERVING_HOOKS, {"call": call, "result": result, "ctx": ctx})


async def refused_tool_call(
    hooks: Hooks, call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> list[tuple[str, str, HookFailure | None]]:
    """Tell every LearningObserver, then every EventPublisher, of a call the chain
    refused (``result.refusal`` says why), each isolated; ``(hook, plugin, failure or
    None)`` for each."""
    return await hooks.each_of(AUDITING_HOOKS, {"call": call, "result": result, "ctx": ctx})
