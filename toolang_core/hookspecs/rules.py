"""How each hook is called: its calling rule, declared beside its spec.

pluggy knows two calling rules (call every implementation, or stop at the first
answer: ``firstresult``) and lets an exception end the call. toolang needs a few more,
each deciding what a raising implementation means: a broken security filter must
block, a broken observer must not stop the others. Each rule below names its combiner
(:mod:`toolang_core.hookspecs.combiners`: what the rule makes of the answers); each
hook spec declares its rule with :func:`calling_rule` right above its ``@hookspec``
(:data:`HOOK_RULES` collects them); :meth:`toolang_core.plugins.facade.Hooks.call`
runs every hook through its rule's combiner; and every page under docs/hooks/ states
the rule (``**Calling rule**: <name>``, checked by tests/test_docs.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

import attrs

from toolang_core.hookspecs.combiners import (
    BestScore,
    Broadcast,
    Collect,
    Combiner,
    Filter,
    FirstAnswer,
    FirstNumber,
    Fold,
    HookFailure,
    Merge,
    Refused,
    Registration,
)

__all__ = [
    "BEST_SCORE",
    "BROADCAST",
    "COLLECT",
    "DECLARED",
    "FILTER",
    "FIRST_ANSWER",
    "FIRST_NUMBER",
    "FOLD",
    "HOOK_RULES",
    "MERGE",
    "REGISTRATION",
    "CallingRule",
    "Declared",
    "HookFailure",
    "Refused",
    "calling_rule",
]


@attrs.frozen
class CallingRule:
    """One way of calling a hook's implementations (always one plugin at a time, in
    pluggy's order, awaitable answers awaited before the next plugin is asked when the
    hook is awaited)."""

    name: str
    """How the docs refer to the rule."""
    statement: str
    """What a plugin author must know: which answers count and what a raise does."""
    combiner: type[Combiner]
    """What the rule makes of the answers of one call."""
    awaited: bool = True
    """Whether a hook of this rule is awaited by default (its answers may be
    awaitables); :func:`calling_rule` may say otherwise for one hook."""

    @property
    def fail_closed(self) -> bool:
        """A raising implementation ends the call with a refusal (block, deny,
        withhold) instead of being skipped."""
        return self.combiner.fail_closed


@attrs.frozen
class Declared:
    """A hook's declaration: its rule, and whether the host awaits its answers (an
    awaited hook is called in a coroutine; the others are called synchronously and
    their answers are taken as they are)."""

    rule: CallingRule
    awaited: bool


REGISTRATION: Final = CallingRule(
    "registration",
    "called once for each plugin while the host builds its components; a plugin that "
    "raises is reported by name and hook and left out, the others' registrations stand.",
    Registration,
    awaited=False,
)
BROADCAST: Final = CallingRule(
    "isolated broadcast",
    "every implementation is called in turn; the return value is ignored; one that "
    "raises is logged and reported, and the others are still called.",
    Broadcast,
)
COLLECT: Final = CallingRule(
    "collect",
    "every implementation is called in turn and each non-empty answer is kept, in call "
    "order; one that raises is logged and skipped.",
    Collect,
    awaited=False,
)
FILTER: Final = CallingRule(
    "fail-closed filter",
    "every implementation is asked in turn until one blocks; a modification is seen by "
    "the later ones; one that raises blocks the call.",
    Filter,
)
FIRST_ANSWER: Final = CallingRule(
    "first answer",
    "implementations are asked in turn and the first answer that is not `None` "
    "decides; one that raises denies the call.",
    FirstAnswer,
)
FOLD: Final = CallingRule(
    "fold",
    "every implementation is called in turn with the value the previous ones left and "
    "may replace it; one that raises withholds the result.",
    Fold,
)
BEST_SCORE: Final = CallingRule(
    "best score",
    "every implementation is asked; the highest-scoring valid answer wins (a tie: the "
    "one asked first); one that raises is logged, reported and skipped.",
    BestScore,
)
FIRST_NUMBER: Final = CallingRule(
    "first number",
    "implementations are asked in turn and the first answer that is not `None` decides; "
    "one that raises is logged and skipped (the default decides when none answers).",
    FirstNumber,
    awaited=False,
)
MERGE: Final = CallingRule(
    "merge",
    "every implementation is called in turn and its answer, a mapping, is merged into "
    "the others', a later key replacing an earlier one; one that raises, answers no "
    "mapping or overruns the hook's time limit adds nothing and is reported.",
    Merge,
)

HOOK_RULES: Final[dict[str, CallingRule]] = {}
"""Every hook's calling rule, by hook name (filled by :func:`calling_rule` as the spec
modules are imported, which importing this module does first)."""
DECLARED: Final[dict[str, Declared]] = {}
"""Every hook's :class:`Declared`, by hook name."""

_F = TypeVar("_F", bound=Callable[..., object])


def calling_rule(rule: CallingRule, *, awaited: bool | None = None) -> Callable[[_F], _F]:
    """Declare the calling rule of the hook spec below (``awaited``: whether the host
    awaits its answers, by default as the rule says); put it above ``@hookspec``.

    :raises ValueError: when the hook already declared a rule.
    """

    def declare(spec: _F) -> _F:
        name = spec.__name__
        if name in HOOK_RULES:
            raise ValueError(f"hook {name} declares a calling rule twice")
        HOOK_RULES[name] = rule
        DECLARED[name] = Declared(rule, rule.awaited if awaited is None else awaited)
        return spec

    return declare
