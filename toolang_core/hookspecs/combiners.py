"""What each calling rule makes of its plugins' answers: one combiner per rule.

A combiner sees one call of one hook. The facade's runner
(:meth:`toolang_core.plugins.facade.Hooks.call`) asks the implementations one plugin at
a time, in pluggy's order, and hands the combiner each plugin's answers (``None``
answers left out, awaitables awaited when the hook is awaited) or the plugin's failure;
the combiner says whether the call ends there and, at the end, what the call answers.
Everything a rule decides — which answers count, when the call stops, what a raise
means — is here; what an answer *means* for one hook (which types are valid, which
verdict blocks, how a modification changes the arguments) comes from the caller as
:class:`Terms`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Final

import attrs

from toolang_core.hookspecs.monomorphic import own_copy


@attrs.frozen
class HookFailure:
    """An implementation raised; the call went on without it."""

    plugin: str
    hook: str
    error: str
    exception: BaseException | None = attrs.field(default=None, eq=False, repr=False)
    """What was raised, for a traceback in debug logs (not part of the value)."""


@attrs.frozen
class Refused:
    """A fail-closed hook's implementation raised: the call ends with a refusal."""

    plugin: str
    failure: HookFailure

    @property
    def error(self) -> str:
        return self.failure.error


@attrs.frozen
class Terms:
    """What one hook's answers mean, for the rules that need to know (the hook's typed
    wrapper passes them; every field has a default that suits the other hooks).

    ``types``: the answers a plugin may give (another is that plugin's failure, like a
    raise); ``ends``: whether an answer ends the call (the fail-closed filter's block);
    ``amend``: how an answer changes the arguments the later plugins see; ``replaces``:
    the argument a fold's answers replace; ``accept``: which answers a best-score call
    may pick (the others are ignored); ``timeout``: seconds each plugin may take (an
    awaited hook only); ``only``: ask this plugin alone (a registration hook, called
    plugin by plugin).
    """

    types: tuple[type, ...] = ()
    ends: Callable[[Any], bool] | None = None
    amend: Callable[[dict[str, Any], Any], None] | None = None
    replaces: str = ""
    accept: Callable[[Any], bool] | None = None
    timeout: float | None = None
    only: str | None = None


NO_TERMS: Final = Terms()


def _unexpected(hook: str, answer: object, expected: tuple[type, ...]) -> str:
    names = ", ".join(t.__name__ for t in expected)
    return f"{hook} answered {answer!r}; expected one of {names} (from toolang_core) or None"


class Combiner:
    """One call's combining; subclasses implement one calling rule each.

    The runner calls :meth:`take` with each plugin's answers (a list, maybe empty) and
    :meth:`fail` with each plugin's failure — either returning ``True`` ends the call —
    and :meth:`result` once at the end. :meth:`take` may raise: that plugin then failed,
    exactly as if its implementation had raised (a wrong answer of a fail-closed hook
    refuses the call).
    """

    __slots__ = ("arguments", "failures", "hook", "terms")

    fail_closed: ClassVar[bool] = False
    """Whether a failure ends the call with a refusal (the runner then does not log it
    as skipped)."""
    logs_failures: ClassVar[bool] = True
    """Whether the runner logs a skipped plugin's failure (``hook.failed``)."""
    takes_silence: ClassVar[bool] = True
    """Whether :meth:`take` must see a plugin that answered nothing (an empty list).
    ``False`` for a rule whose :meth:`take` does nothing with no answers: the runner
    then skips the call (most plugins of the tool-call chain abstain)."""
    answers_itself: ClassVar[bool] = False
    """Whether :meth:`result` is the combiner itself: the runner then answers the
    combiner without calling it (the tool-call chain's three deciding stages)."""

    def __init__(self, hook: str, arguments: dict[str, Any], terms: Terms) -> None:
        self.hook = hook
        self.arguments = arguments
        self.terms = terms
        self.failures: list[HookFailure] = []

    def take(self, plugin: str, answers: Sequence[Any]) -> bool:
        return False

    def fail(self, failure: HookFailure) -> bool:
        self.failures.append(failure)
        return False

    def result(self) -> Any:
        raise NotImplementedError

    def _check(self, answer: Any) -> None:
        types = self.terms.types
        if types and not isinstance(answer, types):
            raise TypeError(_unexpected(self.hook, answer, types))


class Registration(Combiner):
    """Registration: every plugin (or ``terms.only``) once, synchronously; an awaitable
    answer is that plugin's failure (nothing awaits registration). Answers
    ``[(plugin, answers, failure or None)]`` in call order."""

    __slots__ = ("outcomes",)
    logs_failures = False  # the host reports a failed registration (PluginHost.fail)

    def __init__(self, hook: str, arguments: dict[str, Any], terms: Terms) -> None:
        super().__init__(hook, arguments, terms)
        self.outcomes: list[tuple[str, list[Any], HookFailure | None]] = []

    def take(self, plugin: str, answers: Sequence[Any]) -> bool:
        if any(inspect.isawaitable(answer) for answer in answers):
            for answer in answers:
                if inspect.iscoroutine(answer):
                    answer.close()
            raise TypeError(f"{self.hook} must not be async: registration happens at start-up")
        self.outcomes.append((plugin, list(answers), None))
        return False

    def fail(self, failure: HookFailure) -> bool:
        self.failures.append(failure)
        self.outcomes.append((failure.plugin, [], failure))
        return False

    def result(self) -> list[tuple[str, list[Any], HookFailure | None]]:
        return self.outcomes


class Broadcast(Combiner):
    """Isolated broadcast: every plugin, answers ignored, failures kept. Answers
    ``[(hook, plugin, failure or None)]`` in call order (the hook named: several
    broadcasts may share one list, :meth:`HookRunner.call_each`)."""

    __slots__ = ("outcomes",)

    def __init__(
        self,
        hook: str,
        arguments: dict[str, Any],
        terms: Terms,
        outcomes: list[tuple[str, str, HookFailure | None]] | None = None,
    ) -> None:
        """``outcomes``: the list to add to (several broadcasts may share one)."""
        # Flat, not super().__init__(): the tool-call chain makes three per tool call.
        self.hook, self.arguments, self.terms = hook, arguments, terms
        self.failures: list[HookFailure] = []
        self.outcomes = [] if outcomes is None else outcomes

    def take(self, plugin: str, answers: Sequence[Any]) -> bool:
        self.outcomes.append((self.hook, plugin, None))
        return False

    def fail(self, failure: HookFailure) -> bool:
        self.failures.append(failure)
        self.outcomes.append((self.hook, failure.plugin, failure))
        return False

    def result(self) -> list[tuple[str, str, HookFailure | None]]:
        return self.outcomes


class Collect(Combiner):
    """Collect: every plugin; each answer kept (checked against ``terms.types``) in call
    order, a failing plugin skipped. Answers itself: ``answers`` as ``(plugin, answer)``
    in call order, and ``failures``."""

    __slots__ = ("answers",)
    takes_silence = False
    answers_itself = True

    def __init__(self, hook: str, arguments: dict[str, Any], terms: Terms) -> None:
        super().__init__(hook, arguments, terms)
        self.answers: list[tuple[str, Any]] = []

    def take(self, plugin: str, answers: Sequence[Any]) -> bool:
        for answer in answers:
            self._check(answer)
        self.answers.extend((plugin, answer) for answer in answers)
        return False

    def result(self) -> Collect:
        return self


class Decided(Combiner):
    """The deciding rules (filter, first answer, fold, best score, first number); each
    call answers its combiner itself.

    ``decided``: the ``(plugin, answer)`` that decided the call, or ``None`` when none
    did; ``answers``: every answer taken, in call order; ``refused``: set when a raise
    ended a fail-closed call; ``arguments``: the arguments as the last plugin asked saw
    them (a fold's result, a filter's amended call); ``failures``.
    """

    __slots__ = ("answers", "decided", "refused")
    takes_silence = False
    answers_itself = True

    def __init__(self, hook: str, arguments: dict[str, Any], terms: Terms) -> None:
        # Flat, not super().__init__(): the tool-call chain makes three per tool call.
        self.hook, self.arguments, self.terms = hook, arguments, terms
        self.failures: list[HookFailure] = []
        self.answers: list[tuple[str, Any]] = []
        self.decided: tuple[str, Any] | None = None
        self.refused: Refused | None = None

    def fail(self, failure: HookFailure) -> bool:
        self.failures.append(failure)
        if self.fail_closed:
            self.refused = Refused(failure.plugin, failure)
            return True
        return False

    def result(self) -> Decided:
        return self

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Each deciding rule its own copy of __init__'s code: the chain makes three
        # deciding combiners per tool call, of three classes (see .monomorphic).
        super().__init_subclass__(**kwargs)
        if "__init__" not in cls.__dict__:
            own = own_copy(Decided.__init__)
            own.__qualname__ = f"{cls.__qualname__}.__init__"
            cls.__init__ = own  # type: ignore[method-assign]


class Filter(Decided):
    """Fail-closed filter: every plugin until an answer ``terms.ends`` the call; each
    other answer may ``terms.amend`` the arguments the later plugins see; a failure
    refuses the call."""

    __slots__ = ()
    fail_closed = True

    def take(self, plugin: str, answers: Sequence[Any]) -> bool:
        terms = self.terms
        ends, amend, types = terms.ends, terms.amend, terms.types
        for answer in answers:
            if types and not isinstance(answer, types):
                raise TypeError(_unexpected(self.hook, answer, types))
            self.answers.append((plugin, answer))
            if ends is not None and ends(answer):
                self.decided = (plugin, answer)
                return True
            if amend is not None:
                amend(self.arguments, answer)
        return False


class FirstAnswer(Decided):
    """First answer: the first answer decides and ends the call; a failure refuses it."""

    __slots__ = ()
    fail_closed = True

    def take(self, plugin: str, answers: Sequence[Any]) -> bool:
        if not answers:
            return False
        answer = answers[0]
        types = self.terms.types
        if types and not isinstance(answer, types):
            raise TypeError(_unexpected(self.hook, answer, types))
        self.decided = (plugin, answer)
        self.answers.append(self.decided)
        return True


class Fold(Decided):
    """Fold: every plugin, each answer replacing the argument ``terms.replaces`` for the
    later ones (``arguments`` of the result holds the last value); a failure refuses
    the call (the result is withheld)."""

    __slots__ = ()
    fail_closed = True

    def take(self, plugin: str, answers: Sequence[Any]) -> bool:
        for answer in answers:
            self._check(answer)
            self.arguments[self.terms.replaces] = answer
            self.answers.append((plugin, answer))
        return False


class BestScore(Decided):
    """Best score: every plugin; of the answers ``terms.accept`` takes, the one with the
    highest ``score`` decides (a tie: the one asked first); a failing plugin is
    skipped."""

    __slots__ = ()

    def take(self, plugin: str, answers: Sequence[Any]) -> bool:
        accept = self.terms.accept
        for answer in answers:
            self._check(answer)
            if accept is not None and not accept(answer):
                continue
            self.answers.append((plugin, answer))
            if self.decided is None or answer.score > self.decided[1].score:
                self.decided = (plugin, answer)
        return False


class FirstNumber(Decided):
    """First number: the first answer, as a ``float``, decides and ends the call; a
    plugin that raises or answers no number is skipped."""

    __slots__ = ()

    def take(self, plugin: str, answers: Sequence[Any]) -> bool:
        if not answers:
            return False
        number = float(answers[0])
        self.answers.append((plugin, number))
        self.decided = (plugin, number)
        return True


class Merge(Combiner):
    """Merge: every plugin; each answer, a mapping, merged into one (a later key
    replaces an earlier one); a plugin that raises, overruns or answers no mapping adds
    nothing. Answers itself: ``merged`` and ``failures``."""

    __slots__ = ("merged",)
    takes_silence = False
    answers_itself = True

    def __init__(self, hook: str, arguments: dict[str, Any], terms: Terms) -> None:
        super().__init__(hook, arguments, terms)
        self.merged: dict[Any, Any] = {}

    def take(self, plugin: str, answers: Sequence[Any]) -> bool:
        for answer in answers:
            if not isinstance(answer, Mapping):
                raise TypeError(f"{self.hook} answered {answer!r}; expected a mapping or None")
        for answer in answers:  # all or nothing: a plugin's bad answer adds none of its keys
            self.merged.update(answer)
        return False

    def result(self) -> Merge:
        return self
