"""The tool-call hook chain.

The core runs every tool call through one fixed chain::

    SecurityFilter → ApprovalGate → execute → SecurityFilter (result) → LearningObserver
        → KnowledgeSaver → EventPublisher

Each stage is a hook. Implementations are called one at a time in pluggy's order
(``tryfirst`` first, then most recently registered first) and may return an awaitable.
The pre-execution stages decide; the post-execution stages observe, each
implementation isolated from the others: one that raises is recorded in the call's
diagnostics and never skips the rest or fails the call.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import (
    BROADCAST,
    COLLECT,
    FILTER,
    FIRST_ANSWER,
    FOLD,
    REGISTRATION,
    calling_rule,
)
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.plugins.registrars import RegisterFactory
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.tools.types import (
        ApprovalDecision,
        FilterVerdict,
        ToolCall,
        ToolCallContext,
        ToolResult,
    )


@calling_rule(FILTER)
@hookspec
def toolang_filter_tool_call(
    call: ToolCall, ctx: ToolCallContext
) -> FilterVerdict | Awaitable[FilterVerdict | None] | None:
    """SecurityFilter: inspect a tool call before anything else sees it.

    Return :class:`~toolang_core.tools.Block` to refuse the call (the chain stops and
    the model is told the reason), :class:`~toolang_core.tools.Modify` to replace its
    parameters (later filters see the new ones), :class:`~toolang_core.tools.Observe`
    to let it through with a recorded warning, or ``None`` to abstain. Every filter is
    asked until one blocks, so a permissive filter can never hide a blocking one.
    """


@calling_rule(REGISTRATION)
@hookspec
def toolang_register_redactors(register: RegisterFactory) -> None:
    """SecurityFilter: feed detectors to the one redaction policy (``toolang_core.redact``).

    Call ``register(name, factory)``. When a runtime is built, every registered
    ``factory(context)`` is called and must return a detector: a function from a string
    to the same string with what it found masked. The policy runs the core's own rules,
    then every detector, on all text toolang stores or shows (turn requests, steps,
    prompt traces, memory, logs, CLI views). Return nothing.
    """


@calling_rule(FIRST_ANSWER)
@hookspec(firstresult=True)
def toolang_approve_tool_call(
    call: ToolCall, ctx: ToolCallContext
) -> ApprovalDecision | Awaitable[ApprovalDecision | None] | None:
    """ApprovalGate: decide whether a filtered tool call may run.

    Return :class:`~toolang_core.tools.Granted`, :class:`~toolang_core.tools.Denied`
    (the model is told the message) or :class:`~toolang_core.tools.Pending` (a person
    must decide; the turn parks in ``awaiting_approval``). The first non-``None``
    answer decides; ``None`` abstains, and when every gate abstains the call runs.
    """


@calling_rule(FOLD)
@hookspec
def toolang_filter_tool_result(
    call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> ToolResult | Awaitable[ToolResult | None] | None:
    """SecurityFilter, second half: inspect a result before anyone else sees it.

    Called right after execution, before the observers and before the model. Return a
    replacement :class:`~toolang_core.tools.ToolResult` (e.g. with personal data masked;
    later filters see it) or ``None`` to leave it. A filter that raises replaces the
    result with an error (fail closed): an unfiltered result never leaks.
    """


@calling_rule(COLLECT)
@hookspec
def toolang_prompt_notes(agent: str, thread_id: str, runtime: RuntimeView) -> str | None:
    """Short, factual notes for the next prompt of ``agent`` on ``thread_id``.

    Called while the prompt is built. Return a line of text (or ``None``); the runtime
    renders every plugin's notes in one "Notes" section of the system message — a
    plugin never writes the prompt itself. LearningObserver plugins use it to mention a
    tool's recent failures. Keep it cheap: it runs before every turn.
    """


@calling_rule(BROADCAST)
@hookspec
def toolang_observe_tool_result(
    call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> Awaitable[None] | None:
    """LearningObserver: record the outcome of an executed tool call.

    Called after execution with the (possibly failed) result. Also called for a call
    the chain refused (unknown, out of scope, invalid parameters, blocked, denied):
    then ``result.refusal`` says which stage refused it and why, and the parameters and
    the reason are masked — a refusal is no failure of the tool. Return ``None`` or an
    awaitable. Raising never fails the call; it is recorded in the call's diagnostics.
    """


@calling_rule(BROADCAST)
@hookspec
def toolang_save_knowledge(
    call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> Awaitable[None] | None:
    """KnowledgeSaver: keep what a tool call taught, e.g. through the memory plugin.

    Called after every LearningObserver, for calls that ran (never for a refused
    call). Return ``None`` or an awaitable. Raising never fails the call; it is
    recorded in the call's diagnostics.
    """


@calling_rule(BROADCAST)
@hookspec
def toolang_publish_event(
    call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> Awaitable[None] | None:
    """EventPublisher: publish the tool call to event sinks.

    The last stage of the chain; also called for a call the chain refused, with
    ``result.refusal`` set and the parameters masked (an audit event). Return ``None``
    or an awaitable; never block the turn on slow sinks (queue and deliver in the
    background). Raising never fails the call.
    """
