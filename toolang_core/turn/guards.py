"""Guardrails on the model's input and output: the two checks of a model call.

    prompt → toolang_check_model_input → model → toolang_check_model_output → answer

Every agent loop (a turn's own, an ``ask_agent`` specialist's, a task run's) asks the
input guards before each model call and the output guards on the final answer. Both
hooks follow the fail-closed filter rule (:data:`~toolang_core.hookspecs.rules.FILTER`):
every guard in registration order, each seeing the previous one's rewrite; the first
:class:`Refuse` ends the check; a guard that raises (or answers something that is no
verdict) refuses, naming the plugin and the hook — exactly as a raising SecurityFilter
blocks a tool call. A refusal ends the turn ``failed`` with outcome :data:`GUARDRAIL`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sized
from typing import TYPE_CHECKING, Any, Final, Protocol

import attrs

from toolang_core.hookspecs.combiners import Terms
from toolang_core.models.types import Message

if TYPE_CHECKING:
    from toolang_core.execution.seam import TurnContext
    from toolang_core.runtime_view import RuntimeView

GUARDRAIL: Final = "guardrail"
"""The outcome of a turn a guard refused (its status is ``failed``)."""
INPUT_HOOK: Final = "toolang_check_model_input"
OUTPUT_HOOK: Final = "toolang_check_model_output"


class GuardHooks(Protocol):
    """What the checks call of the hook facade (:class:`~toolang_core.plugins.facade.Hooks`
    is one). Named here, not the facade: the guard hooks' specifications name this
    module's verdicts, and the type checker's graph would otherwise lead from the
    specifications through the facade back to them."""

    @property
    def callers(self) -> Callable[[str], Sized]:
        """``callers(hook)``: the plugins implementing ``hook`` (empty: none do)."""

    def call_with(self, hook: str, terms: Terms, /, **kwargs: Any) -> Any:
        """Call ``hook`` by its calling rule with ``terms``; the combiner's outcome."""
        ...


@attrs.frozen
class GuardContext:
    """Where a model call happens, for a guard: the turn, thread and run, the agent
    answering and its model, ``spawn_depth`` (0 for a top-level turn, one more in each
    ``ask_agent`` specialist or task run), ``step`` (the loop's model call, from 0) and
    ``runtime`` (settings, plugin state, the redaction policy)."""

    turn_id: str
    thread_id: str
    run_id: str
    agent: str
    model: str
    spawn_depth: int
    step: int
    runtime: RuntimeView = attrs.field(repr=False, eq=False)


@attrs.frozen
class Refuse:
    """A guard's refusal: the turn ends with outcome ``guardrail``; ``rule`` names the
    guard's rule (shown in the trace and the turn's error); ``reason`` says why (masked
    by the redaction policy before it is stored)."""

    rule: str
    reason: str = ""


def _messages(messages: Iterable[Message]) -> tuple[Message, ...]:
    """``tuple(messages)``: a function, not the type, whose signature attrs reads for
    the converter (a builtin's is parsed from text with ``tokenize``, whose ~12 ms
    expression every one-shot ``toolang chat`` then compiled)."""
    return tuple(messages)


@attrs.frozen
class RewritePrompt:
    """An input guard's rewrite: ``messages`` go to the model instead (the later guards
    see them); ``reason`` is recorded in the trace."""

    messages: tuple[Message, ...] = attrs.field(
        converter=_messages,
        validator=attrs.validators.deep_iterable(attrs.validators.instance_of(Message)),
    )
    reason: str = ""


@attrs.frozen
class RewriteAnswer:
    """An output guard's rewrite: ``text`` is the answer stored and returned instead
    (the later guards see it); ``reason`` is recorded in the trace."""

    text: str = attrs.field(validator=attrs.validators.instance_of(str))
    reason: str = ""


@attrs.frozen
class GuardOutcome:
    """One check: the (maybe rewritten) ``value``, every rewrite as ``(plugin,
    reason)``, and the refusal as ``(plugin, Refuse)`` when a guard refused."""

    value: Any
    rewrites: tuple[tuple[str, str], ...] = ()
    refused: tuple[str, Refuse] | None = None

    def trace(self, hook: str) -> dict[str, Any]:
        """What the turn's ``guardrail`` step records (masked by the step write)."""
        data: dict[str, Any] = {"hook": hook}
        if self.rewrites:
            data["rewritten_by"] = [{"plugin": p, "reason": r} for p, r in self.rewrites]
        if self.refused is not None:
            plugin, refusal = self.refused
            data["refused"] = {"plugin": plugin, "rule": refusal.rule, "reason": refusal.reason}
        return data

    def error(self, what: str) -> str:
        """The refused turn's error: which guard, which rule, why."""
        assert self.refused is not None
        plugin, refusal = self.refused
        why = f": {refusal.reason}" if refusal.reason else ""
        return f"guardrail {refusal.rule!r} of plugin {plugin!r} refused the {what}{why}"


def _refuses(verdict: object) -> bool:
    return isinstance(verdict, Refuse)


def _amend(argument: str, attribute: str) -> Any:
    def amend(arguments: dict[str, Any], verdict: object) -> None:
        arguments[argument] = getattr(verdict, attribute)

    return amend


INPUT_TERMS: Final = Terms(
    types=(Refuse, RewritePrompt), ends=_refuses, amend=_amend("messages", "messages")
)
OUTPUT_TERMS: Final = Terms(
    types=(Refuse, RewriteAnswer), ends=_refuses, amend=_amend("text", "text")
)


async def _check(
    hooks: GuardHooks, hook: str, terms: Terms, argument: str, **kwargs: Any
) -> GuardOutcome:
    done = await hooks.call_with(hook, terms, **kwargs)
    if not done.answers and done.refused is None:  # every guard let it pass: most calls
        return GuardOutcome(done.arguments[argument])
    rewrites = tuple(
        (plugin, verdict.reason or "rewritten")
        for plugin, verdict in done.answers
        if not isinstance(verdict, Refuse)
    )
    refused = done.decided
    if done.refused is not None:  # fail closed: a broken guard refuses, named
        failed = done.refused
        refused = (
            failed.plugin,
            Refuse("error", f"{failed.plugin!r} failed in {hook}: {failed.error}"),
        )
    return GuardOutcome(done.arguments[argument], rewrites, refused)


async def check_input(
    hooks: GuardHooks, messages: tuple[Message, ...], ctx: GuardContext
) -> GuardOutcome:
    """Ask every input guard about the prompt ``messages``; ``value``: the messages to
    send. No guard installed: the messages as they are, no coroutine of a hook."""
    if not hooks.callers(INPUT_HOOK):
        return GuardOutcome(messages)
    return await _check(hooks, INPUT_HOOK, INPUT_TERMS, "messages", messages=messages, ctx=ctx)


async def check_output(hooks: GuardHooks, text: str, ctx: GuardContext) -> GuardOutcome:
    """Ask every output guard about the final answer ``text``; ``value``: the answer to
    store and return."""
    if not hooks.callers(OUTPUT_HOOK):
        return GuardOutcome(text)
    return await _check(hooks, OUTPUT_HOOK, OUTPUT_TERMS, "text", text=text, ctx=ctx)


def record(ctx: TurnContext, outcome: GuardOutcome, *, hook: str, key: str, agent: str) -> None:
    """Put a check that rewrote or refused in the turn's trace: a ``guardrail`` step
    naming the plugins (masked by the step write, like every step: a rewrite that hid a
    secret never shows it raw). A replayed check records nothing new."""
    if not (outcome.rewrites or outcome.refused) or ctx.find_step(key) is not None:
        return
    refused = outcome.refused is not None
    ctx.defer_step(
        "guardrail",
        data={**outcome.trace(hook), "agent": agent},
        status="failed" if refused else "completed",
        error=outcome.error("input" if hook == INPUT_HOOK else "answer") if refused else None,
        idempotency_key=key,
    )
