"""The hook stages of a tool call: what each stage asks its plugins and what it makes of
the answers.

    SecurityFilter (call) → ApprovalGate → [the tool runs] → SecurityFilter (result)
        → LearningObserver → KnowledgeSaver → EventPublisher

Each stage calls its hook as the facade's one generic call does
(:meth:`~toolang_core.plugins.facade.Hooks.call_with`), bound once per chain
(:class:`ChainStages`, :meth:`~toolang_core.plugins.runner.HookRunner.bind`): the
runner combines the answers by the hook's declared calling rule
(:mod:`toolang_core.hookspecs.rules`); a stage only
says what its hook's answers mean (:class:`~toolang_core.hookspecs.combiners.Terms`:
the valid verdicts, which one blocks, how a modification applies) and turns a
fail-closed refusal into the stage's own answer: a block, a denial, a withheld result.
:class:`~toolang_core.tools.chain.ToolChain` runs the stages in order and records them.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core.hookspecs import TOOL_CHAIN
from toolang_core.hookspecs.combiners import Terms
from toolang_core.hookspecs.rules import HookFailure
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


def _amend(arguments: dict[str, Any], verdict: FilterVerdict) -> None:
    """A filter's ``Modify`` (or ``AskApproval`` with parameters): the later filters and
    the rest of the chain see the new parameters."""
    params = verdict.params if isinstance(verdict, Modify | AskApproval) else None
    if params is not None:
        changed = attrs.evolve(arguments["call"], params=dict(params))
        arguments["call"], arguments["ctx"] = changed, attrs.evolve(arguments["ctx"], call=changed)


def _blocks(verdict: FilterVerdict) -> bool:
    return isinstance(verdict, Block)


FILTER_TERMS: Final = Terms(types=(Block, Modify, Observe, AskApproval), ends=_blocks, amend=_amend)
"""What a SecurityFilter may answer, which answer blocks, how a modification applies."""
APPROVAL_TERMS: Final = Terms(types=(Granted, Denied, Pending))
"""What an ApprovalGate may answer."""
RESULT_FILTER_TERMS: Final = Terms(types=(ToolResult,), replaces="result")
"""What a result filter may answer: the result the later ones (and the model) see."""

NO_DECISION: Final = ApprovalOutcome(None, None)
"""Every gate abstained (most tool calls): one frozen value, not one per call."""


FILTER_HOOK: Final = "toolang_filter_tool_call"
APPROVAL_HOOK: Final = "toolang_approve_tool_call"
RESULT_FILTER_HOOK: Final = "toolang_filter_tool_result"


class ChainStages:
    """The chain's stages over one :class:`Hooks`, each stage's hook bound once to its
    declared rule and its :class:`Terms` (:meth:`~toolang_core.plugins.runner.
    HookRunner.bind`): :class:`~toolang_core.tools.chain.ToolChain` makes one and asks
    it on every tool call. Holds nothing of a call: one serves concurrent calls."""

    def __init__(self, hooks: Hooks) -> None:
        self.hooks = hooks
        self._callers = hooks.callers
        # Their bound __call__: calling an object with a Python __call__ takes the
        # interpreter's slow path (a tuple of arguments per call); a bound method does not.
        self._filter = hooks.bind(FILTER_HOOK, FILTER_TERMS).__call__
        self._approve = hooks.bind(APPROVAL_HOOK, APPROVAL_TERMS).__call__
        self._filter_result = hooks.bind(RESULT_FILTER_HOOK, RESULT_FILTER_TERMS).__call__
        self._observing = hooks.bind_each(OBSERVING_HOOKS).__call__
        self._auditing = hooks.bind_each(AUDITING_HOOKS).__call__
        self._observe = hooks.bind_each(("toolang_observe_tool_result",)).__call__

    async def filter_tool_call(self, call: ToolCall, ctx: ToolCallContext) -> FilterOutcome:
        """Ask every SecurityFilter in turn until one blocks (the fail-closed filter
        rule).

        A filter that raises, or answers something that is no verdict, blocks the call:
        a broken security filter fails closed.
        """
        if not self._callers(FILTER_HOOK):
            return FilterOutcome(call)  # no filter: the common bare chain, no coroutine
        done = await self._filter({"call": call, "ctx": ctx})
        blocked, refused = done.decided, done.refused
        if refused is not None:
            blocked = (
                refused.plugin,
                Block(f"security filter {refused.plugin!r} failed: {refused.error}"),
            )
        return FilterOutcome(
            done.arguments["call"], tuple(done.answers), blocked, tuple(done.failures)
        )

    async def approve_tool_call(self, call: ToolCall, ctx: ToolCallContext) -> ApprovalOutcome:
        """Ask the ApprovalGates in turn; the first decision wins (the first-answer
        rule).

        A gate that raises, or answers something that is no decision, denies the call:
        a broken gate fails closed.
        """
        if not self._callers(APPROVAL_HOOK):
            return NO_DECISION
        done = await self._approve({"call": call, "ctx": ctx})
        if done.refused is not None:
            denied = Denied(f"approval gate {done.refused.plugin!r} failed: {done.refused.error}")
            return ApprovalOutcome(done.refused.plugin, denied, tuple(done.failures))
        return NO_DECISION if done.decided is None else ApprovalOutcome(*done.decided)

    async def filter_tool_result(
        self, call: ToolCall, result: ToolResult, ctx: ToolCallContext
    ) -> tuple[ToolResult, tuple[tuple[str, str], ...], tuple[HookFailure, ...]]:
        """Let every result filter replace the result in turn (the fold rule);
        ``(result, changed-by (plugin, reason) pairs, failures)``. A filter that raises,
        or answers something that is no result, withholds the result (fail closed)."""
        if not self._callers(RESULT_FILTER_HOOK):
            return result, (), ()
        done = await self._filter_result({"call": call, "result": result, "ctx": ctx})
        answers = done.answers  # most calls: none (no generator made for nothing)
        changed = tuple((plugin, "modified the result") for plugin, _ in answers) if answers else ()
        if done.refused is not None:
            withheld = ToolResult(
                ok=False,
                error=f"result withheld: security filter {done.refused.plugin!r} failed "
                f"({done.refused.error})",
                error_type="filter_failed",
            )
            return withheld, changed, tuple(done.failures)
        return done.arguments["result"], changed, ()

    async def observe_tool_result(
        self, call: ToolCall, result: ToolResult, ctx: ToolCallContext
    ) -> list[tuple[str, HookFailure | None]]:
        """Every LearningObserver, each isolated; ``(plugin, failure or None)`` for
        each."""
        done = await self._observe({"call": call, "result": result, "ctx": ctx})
        return [(plugin, failure) for _, plugin, failure in done]

    def after_tool_call(
        self, call: ToolCall, result: ToolResult, ctx: ToolCallContext
    ) -> Coroutine[Any, Any, list[tuple[str, str, HookFailure | None]]]:
        """The observing stages of the chain in order — every LearningObserver, then
        every KnowledgeSaver, then every EventPublisher — each implementation isolated;
        ``(hook, plugin, failure or None)`` for each."""
        return self._observing({"call": call, "result": result, "ctx": ctx})

    def refused_tool_call(
        self, call: ToolCall, result: ToolResult, ctx: ToolCallContext
    ) -> Coroutine[Any, Any, list[tuple[str, str, HookFailure | None]]]:
        """Tell every LearningObserver, then every EventPublisher, of a call the chain
        refused (``result.refusal`` says why), each isolated; ``(hook, plugin, failure
        or None)`` for each."""
        return self._auditing({"call": call, "result": result, "ctx": ctx})


# The stages one at a time, over any Hooks (the plugin-author kit's helpers,
# toolang_core.testing): each binds the stage's hook for that one call.


async def filter_tool_call(hooks: Hooks, call: ToolCall, ctx: ToolCallContext) -> FilterOutcome:
    """:meth:`ChainStages.filter_tool_call`: every SecurityFilter in turn until one
    blocks; one that raises, or answers something that is no verdict, blocks the call."""
    return await ChainStages(hooks).filter_tool_call(call, ctx)


async def approve_tool_call(hooks: Hooks, call: ToolCall, ctx: ToolCallContext) -> ApprovalOutcome:
    """:meth:`ChainStages.approve_tool_call`: the ApprovalGates in turn, the first
    decision wins; one that raises, or answers something that is no decision, denies."""
    return await ChainStages(hooks).approve_tool_call(call, ctx)


async def filter_tool_result(
    hooks: Hooks, call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> tuple[ToolResult, tuple[tuple[str, str], ...], tuple[HookFailure, ...]]:
    """:meth:`ChainStages.filter_tool_result`: every result filter may replace the
    result in turn; one that raises, or answers no result, withholds it."""
    return await ChainStages(hooks).filter_tool_result(call, result, ctx)


async def observe_tool_result(
    hooks: Hooks, call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> list[tuple[str, HookFailure | None]]:
    """:meth:`ChainStages.observe_tool_result`: every LearningObserver, each isolated."""
    return await ChainStages(hooks).observe_tool_result(call, result, ctx)


async def after_tool_call(
    hooks: Hooks, call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> list[tuple[str, str, HookFailure | None]]:
    """:meth:`ChainStages.after_tool_call`: the observing stages in order."""
    return await ChainStages(hooks).after_tool_call(call, result, ctx)


async def refused_tool_call(
    hooks: Hooks, call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> list[tuple[str, str, HookFailure | None]]:
    """:meth:`ChainStages.refused_tool_call`: the auditing stages of a refused call."""
    return await ChainStages(hooks).refused_tool_call(call, result, ctx)
