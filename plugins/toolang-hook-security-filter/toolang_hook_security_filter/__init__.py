"""toolang-hook-security-filter: the SecurityFilter stage of the tool-call hook chain.

Blocks calls whose strings hold destructive shell use (recursive deletes of the root or
a home, disk formatting, fork bombs, downloads piped into a shell, reverse shells,
credential exfiltration …), warns about risky ones, and masks personal data in the
parameters going in, in the results coming out and (``redact_answers``) in agents' final
answers. See README.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from toolang_core import hookimpl

if TYPE_CHECKING:
    from toolang_core import (
        AskApproval,
        Block,
        GuardContext,
        Modify,
        Observe,
        PluginContext,
        RegisterFactory,
        RegisterSettings,
        RewriteAnswer,
        Runtime,
        RuntimeView,
        ToolCall,
        ToolCallContext,
        ToolResult,
    )
    from toolang_hook_security_filter.policy import Policy
    from toolang_hook_security_filter.settings import FilterSettings

NAME = "hook-security-filter"


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    from toolang_hook_security_filter.settings import FilterSettings

    register(FilterSettings)


@hookimpl
def toolang_register_redactors(register: RegisterFactory) -> None:
    register("pii", _detector, description="keys, tokens and the personal data of pii_kinds")


def _detector(context: PluginContext) -> Callable[[str], str]:
    """The runtime's redaction detector: this filter's finders of ``pii_kinds``, so what
    is masked in tool calls is masked wherever text is stored or shown too."""
    from toolang_hook_security_filter.pii import SHORTEST_MASKED, Scrubber
    from toolang_hook_security_filter.settings import FilterSettings

    kinds = (context.settings or FilterSettings()).pii_kinds
    # The scrubber (some forty expressions) is made by the first text that could hold
    # something to mask, not when the runtime is made: a one-shot turn whose texts are
    # all short never pays for it, and nothing reaches a store before it is made.
    scrubber: Scrubber | None = None

    def detect(text: str) -> str:
        nonlocal scrubber
        if len(text) < SHORTEST_MASKED:
            return text
        if scrubber is None:
            scrubber = Scrubber(kinds)  # two threads may both make one: either is right
        return scrubber.scrub_text(text, {})

    return detect


@hookimpl
def toolang_filter_tool_call(
    call: ToolCall, ctx: ToolCallContext
) -> Block | Modify | Observe | AskApproval | None:
    registration = ctx.runtime.components.tools.get(call.name) if ctx.runtime else None
    keep = registration.tool.secret_params if registration is not None else ()
    return policy_of(ctx).check_call(call, keep)


@hookimpl
def toolang_filter_tool_result(
    call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> ToolResult | None:
    return policy_of(ctx).filter_result(call, result)


@hookimpl
def toolang_check_model_output(text: str, ctx: GuardContext) -> RewriteAnswer | None:
    """The output guardrail: with ``redact_answers`` on, the final answer with personal
    data and secrets masked (the redaction detector's finders, same ``pii_kinds``).
    Off (the default), the policy is not built for it: a turn that calls no tool never
    compiles the filter's rules."""
    if not getattr(ctx.runtime.settings.get(NAME), "redact_answers", False):
        return None
    masked = policy_for(ctx.runtime).mask_answer(text)
    if masked is None:
        return None
    from toolang_core import RewriteAnswer

    return RewriteAnswer(*masked)


@hookimpl
def toolang_startup(runtime: Runtime) -> None:
    """Compile the whole policy before the first tool call rather than inside it (a few
    hundred milliseconds of regular expressions and bashlex's parser tables in a fresh
    process); a one-shot run builds only what its calls need, when they need it."""
    if not runtime.one_shot:
        policy_for(runtime).warm()


def policy_of(ctx: ToolCallContext) -> Policy:
    """The compiled policy of the call's runtime (:func:`policy_for`, inlined: asked
    twice per tool call)."""
    runtime = ctx.runtime
    return runtime.plugin_state(NAME, lambda: _build(runtime.settings.get(NAME)))


def policy_for(runtime: RuntimeView) -> Policy:
    """The compiled policy of ``runtime``, built from its settings on first use."""
    return runtime.plugin_state(NAME, lambda: _build(runtime.settings.get(NAME)))


def _build(settings: FilterSettings | None) -> Policy:
    from toolang_hook_security_filter.policy import Policy
    from toolang_hook_security_filter.settings import FilterSettings

    return Policy(settings or FilterSettings())
