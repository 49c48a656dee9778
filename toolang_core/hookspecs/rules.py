"""How each hook is called: its calling rule, declared once beside the specs.

pluggy knows two calling rules (call every implementation, or stop at the first
answer: ``firstresult``) and lets an exception end the call. toolang needs a few more,
each deciding what a raising implementation means: a broken security filter must
block, a broken observer must not stop the others. :data:`HOOK_RULES` names the rule
of every hook; :class:`toolang_core.plugins.facade.Hooks` runs each hook by its rule
and every page under docs/hooks/ states it (``**Calling rule**: <name>``, checked by
tests/test_docs.py).
"""

from __future__ import annotations

from typing import Final

import attrs


@attrs.frozen
class CallingRule:
    """One way of calling a hook's implementations (always one plugin at a time, in
    pluggy's order, awaitable answers awaited before the next plugin is asked)."""

    name: str
    """How the docs refer to the rule."""
    statement: str
    """What a plugin author must know: which answers count and what a raise does."""
    fail_closed: bool = False
    """A raising implementation ends the call with a refusal (block, deny, withhold)
    instead of being skipped."""


@attrs.frozen
class HookFailure:
    """An implementation raised; the call went on without it."""

    plugin: str
    hook: str
    error: str


@attrs.frozen
class Refused:
    """A fail-closed hook's implementation raised: the call ends with a refusal."""

    plugin: str
    failure: HookFailure

    @property
    def error(self) -> str:
        return self.failure.error


REGISTRATION: Final = CallingRule(
    "registration",
    "called once for each plugin while the host builds its components; a plugin that "
    "raises is reported by name and hook and left out, the others' registrations stand.",
)
BROADCAST: Final = CallingRule(
    "isolated broadcast",
    "every implementation is called in turn; the return value is ignored; one that "
    "raises is logged and reported, and the others are still called.",
)
COLLECT: Final = CallingRule(
    "collect",
    "every implementation is called in turn and each non-empty answer is kept, in call "
    "order; one that raises is logged and skipped.",
)
FILTER: Final = CallingRule(
    "fail-closed filter",
    "every implementation is asked in turn until one blocks; a modification is seen by "
    "the later ones; one that raises blocks the call.",
    fail_closed=True,
)
FIRST_ANSWER: Final = CallingRule(
    "first answer",
    "implementations are asked in turn and the first answer that is not `None` "
    "decides; one that raises denies the call.",
    fail_closed=True,
)
FOLD: Final = CallingRule(
    "fold",
    "every implementation is called in turn with the value the previous ones left and "
    "may replace it; one that raises withholds the result.",
    fail_closed=True,
)
BEST_SCORE: Final = CallingRule(
    "best score",
    "every implementation is asked; the highest-scoring valid answer wins (a tie: the "
    "one asked first); one that raises is logged, reported and skipped.",
)
FIRST_NUMBER: Final = CallingRule(
    "first number",
    "implementations are asked in turn and the first answer that is not `None` decides; "
    "one that raises is logged and skipped (the default decides when none answers).",
)
MERGE: Final = CallingRule(
    "merge with timeout",
    "every implementation is called in turn under a time limit and the answers are "
    "merged, a later key replacing an earlier one; one that raises or overruns adds "
    "nothing and is reported.",
)

HOOK_RULES: Final[dict[str, CallingRule]] = {
    "toolang_register_settings": REGISTRATION,
    "toolang_inactive_hooks": COLLECT,
    "toolang_startup": BROADCAST,
    "toolang_shutdown": BROADCAST,
    "toolang_register_commands": REGISTRATION,
    "toolang_register_stores": REGISTRATION,
    "toolang_register_models": REGISTRATION,
    "toolang_register_tools": REGISTRATION,
    "toolang_register_memory": REGISTRATION,
    "toolang_filter_tool_call": FILTER,
    "toolang_register_redactors": REGISTRATION,
    "toolang_approve_tool_call": FIRST_ANSWER,
    "toolang_filter_tool_result": FOLD,
    "toolang_prompt_notes": COLLECT,
    "toolang_observe_tool_result": BROADCAST,
    "toolang_save_knowledge": BROADCAST,
    "toolang_publish_event": BROADCAST,
    "toolang_agent_sources": REGISTRATION,
    "toolang_route": BEST_SCORE,
    "toolang_register_turn_sources": REGISTRATION,
    "toolang_deliver_turn": BROADCAST,
    "toolang_finalize_task_run": MERGE,
    "toolang_observe_task_run": BROADCAST,
    "toolang_on_event": BROADCAST,
    "toolang_register_routes": REGISTRATION,
    "toolang_serves_routes": COLLECT,
    "toolang_turn_started": BROADCAST,
    "toolang_turn_step": BROADCAST,
    "toolang_turn_finished": BROADCAST,
    "toolang_outbound_headers": COLLECT,
    "toolang_doctor_checks": COLLECT,
    "toolang_score_agent": FIRST_NUMBER,
    "toolang_agree_payment": BROADCAST,
    "toolang_ping_agents": COLLECT,
}
"""Every hook's calling rule, by hook name."""
