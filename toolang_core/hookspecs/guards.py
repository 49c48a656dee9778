"""Guardrails: checks on what goes to the model and on the answer that comes back.

The tool-call chain checks what an agent *does*; these two hooks check what it *reads
and says*. The input guard sees the prompt before every model call, the output guard
the final answer before it is stored and returned — in every agent loop, nested and
delegated ones included (:mod:`toolang_core.turn.guards`).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from toolang_core.hookspecs.rules import FILTER, calling_rule
from toolang_core.markers import hookspec

if TYPE_CHECKING:
    from toolang_core.models.types import Message
    from toolang_core.turn.guards import GuardContext, Refuse, RewriteAnswer, RewritePrompt


@calling_rule(FILTER)
@hookspec
def toolang_check_model_input(
    messages: tuple[Message, ...], ctx: GuardContext
) -> Refuse | RewritePrompt | Awaitable[Refuse | RewritePrompt | None] | None:
    """Input guardrail: inspect the prompt before each model call.

    ``messages`` are the messages about to go to the model (after earlier guards'
    rewrites). Return :class:`~toolang_core.Refuse` to end the turn with outcome
    ``guardrail`` before the model is called, :class:`~toolang_core.RewritePrompt` to
    send other messages (later guards see them), or ``None`` to let them through. Every
    guard is asked until one refuses; a guard that raises refuses (fail closed).
    """


@calling_rule(FILTER)
@hookspec
def toolang_check_model_output(
    text: str, ctx: GuardContext
) -> Refuse | RewriteAnswer | Awaitable[Refuse | RewriteAnswer | None] | None:
    """Output guardrail: inspect an agent's final answer before it is stored and returned.

    ``text`` is the answer (after earlier guards' rewrites). Return
    :class:`~toolang_core.Refuse` to end the turn with outcome ``guardrail`` instead of
    answering, :class:`~toolang_core.RewriteAnswer` to answer other text (e.g. with
    personal data masked; later guards see it), or ``None`` to let it through. Every
    guard is asked until one refuses; a guard that raises refuses (fail closed).
    """
