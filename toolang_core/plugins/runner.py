"""The one way toolang calls a hook: by the calling rule its spec declares.

:class:`HookRunner` asks a hook's implementations one plugin at a time, in pluggy's
order (awaiting awaitable answers when the hook is awaited), and hands each plugin's
answers — or its failure — to the combiner of the hook's rule
(:mod:`toolang_core.hookspecs.combiners`), which decides when the call ends and what it
answers. :class:`toolang_core.plugins.facade.Hooks` puts a typed wrapper over it for
every hook; nothing else calls an implementation (``tests/test_hook_rules.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from types import MethodType
from typing import TYPE_CHECKING, Any, Final

import structlog

from toolang_core.errors import PLUGIN_FAILURES, describe_exception
from toolang_core.hookspecs.combiners import NO_TERMS, Broadcast, Combiner, Terms
from toolang_core.hookspecs.monomorphic import own_copy
from toolang_core.hookspecs.rules import BROADCAST, DECLARED, Declared, HookFailure

if TYPE_CHECKING:
    from toolang_core.plugins.manager import Arguments, ToolangPluginManager

log = structlog.get_logger("toolang.hooks")


_NO_ANSWERS: Final[tuple[Any, ...]] = ()
"""What an implementation answering ``None`` answers (one empty value, not a list per
call)."""


def _answers(function: Any, arguments: Arguments | None, kwargs: dict[str, Any]) -> Any:
    """One plugin's answers: see :attr:`ToolangPluginManager.calls_lookup`."""
    if arguments is None:
        return function(kwargs)
    answer = function(*arguments(kwargs))
    return _NO_ANSWERS if answer is None else [answer]


async def _answer(value: Any) -> Any:
    return value


async def _settled(answers: Sequence[Any]) -> list[Any]:
    """``answers`` with each awaitable awaited, in order, and ``None`` left out (an
    awaited abstention). A loop, not a comprehension: one holding an await is a
    coroutine of its own."""
    settled: list[Any] = []
    for value in answers:
        got = await value if hasattr(value, "__await__") else value
        if got is not None:
            settled.append(got)
    return settled


class HookRunner:
    """Calls the hooks of one plugin manager, each by its declared calling rule."""

    def __init__(self, pm: ToolangPluginManager) -> None:
        self.callers = pm.callers_lookup
        """``callers(hook)``: ``(plugin, caller)`` pairs in call order, empty when no
        plugin implements ``hook`` (bound once, no Python call once cached: the
        tool-call chain asks per stage)."""
        self._answering = pm.answers_lookup
        self._calls = pm.calls_lookup

    def implemented(self, hook: str) -> bool:
        """Whether any plugin implements ``hook`` (asked before a call that would cost
        a coroutine for nothing)."""
        return bool(self.callers(hook))

    def implementations(self, hook: str) -> list[str]:
        """Names of the plugins implementing ``hook``, in the order they are called."""
        return [name for name, _ in self.callers(hook)]

    def call(self, hook: str, /, **kwargs: Any) -> Any:
        """Call ``hook`` with ``kwargs`` by its calling rule (declared beside its spec,
        :data:`~toolang_core.hookspecs.rules.DECLARED`) and answer what the rule's
        combiner makes of the answers (:mod:`toolang_core.hookspecs.combiners`).

        One plugin at a time in pluggy's order; ``None`` answers left out; a plugin that
        raises is a :class:`HookFailure` naming it and the hook — it ends the call with
        a refusal under a fail-closed rule, and is logged and skipped under the others.
        An awaited hook answers a coroutine (its answers' awaitables are awaited before
        the next plugin is asked); the others answer at once.

        :raises LookupError: when ``hook`` declares no calling rule.
        """
        return self.call_with(hook, NO_TERMS, **kwargs)

    def call_with(self, hook: str, terms: Terms, /, **kwargs: Any) -> Any:
        """:meth:`call`, with what ``hook``'s answers mean to its rule (:class:`Terms`:
        the valid answer types, which answer ends the call, …)."""
        declared = _declared(hook)
        combiner = declared.rule.combiner(hook, kwargs, terms)
        if declared.awaited:
            return self._run(combiner)
        if terms.timeout is not None:
            raise ValueError(f"{hook} is not awaited: a time limit cannot apply to it")
        return self._run_now(combiner)

    async def call_each(
        self, hooks: Sequence[str], /, **kwargs: Any
    ) -> list[tuple[str, str, HookFailure | None]]:
        """Call each of ``hooks`` — awaited isolated broadcasts — in turn with the same
        ``kwargs``; ``(hook, plugin, failure or None)`` for each implementation. One
        coroutine for several hooks: the tool-call chain calls three such hooks per
        tool call."""
        return await self.bind_each(hooks)(kwargs)

    def bind(self, hook: str, terms: Terms = NO_TERMS, /) -> BoundHook:
        """``hook`` with ``terms``, its calling rule looked up once: for a caller that
        calls the same awaited hook again and again (:class:`BoundHook`).

        :raises LookupError: when ``hook`` declares no calling rule.
        :raises ValueError: when ``hook`` is not awaited.
        """
        return BoundHook(self, hook, terms)

    def bind_each(self, hooks: Sequence[str], /) -> BoundBroadcasts:
        """:meth:`call_each` of ``hooks``, their rules checked once
        (:class:`BoundBroadcasts`).

        :raises ValueError: when one of ``hooks`` is no awaited broadcast.
        """
        return BoundBroadcasts(self, hooks)

    async def _run(self, *combiners: Combiner) -> Any:
        """Run each of ``combiners``' calls in turn, in one coroutine, and answer the
        first one's result. Kept lean: the tool-call chain runs six per tool call (a
        plugin that answers nothing reaches only a rule that :attr:`~Combiner.
        takes_silence`; a combiner that :attr:`~Combiner.answers_itself` is answered
        without a call; a time limit or a single plugin: :meth:`_run_under_terms`)."""
        for each in combiners:
            terms, kwargs = each.terms, each.arguments
            if terms.only is not None or terms.timeout is not None:
                await self._run_under_terms(each)
                continue
            answers: Sequence[Any]
            for plugin, function, arguments in self._calls(each.hook):
                try:
                    if arguments is None:  # rare: a wrapper, or monitoring (pluggy's caller)
                        answers = await _settled(function(kwargs))
                    else:  # the plugin's one plain implementation, called here
                        answer = function(*arguments(kwargs))
                        if answer is None:  # most: the plugin abstains
                            answers = _NO_ANSWERS
                        elif hasattr(answer, "__await__"):
                            answers = await _settled((answer,))
                        else:
                            answers = [answer]
                    # Inside the try: an answer the rule cannot use is that plugin's failure.
                    if (answers or each.takes_silence) and each.take(plugin, answers):
                        break
                except PLUGIN_FAILURES as exc:
                    if self._failed(each, plugin, exc):
                        break
        first = combiners[0]
        return first if first.answers_itself else first.result()

    async def _run_under_terms(self, combiner: Combiner) -> None:
        """:meth:`_run` of one combiner whose terms ask one plugin alone or set each
        plugin a time limit."""
        terms, kwargs = combiner.terms, combiner.arguments
        calls = self._calls(combiner.hook)
        if terms.only is not None:
            calls = tuple(entry for entry in calls if entry[0] == terms.only)
        timeout = terms.timeout
        for plugin, function, arguments in calls:
            try:
                if timeout is not None:
                    async with asyncio.timeout(timeout):
                        answers = await _settled(_answers(function, arguments, kwargs))
                else:
                    answers = await _settled(_answers(function, arguments, kwargs))
                if (answers or combiner.takes_silence) and combiner.take(plugin, answers):
                    break
            except PLUGIN_FAILURES as exc:
                if self._failed(combiner, plugin, exc):
                    break

    def _run_now(self, combiner: Combiner) -> Any:
        hook, kwargs, only = combiner.hook, combiner.arguments, combiner.terms.only
        take, silence = combiner.take, combiner.takes_silence
        pairs = self._answering(hook)
        if only is not None:
            pairs = tuple(pair for pair in pairs if pair[0] == only)
        for plugin, answer in pairs:
            try:
                answers = answer(kwargs)
                if (answers or silence) and take(plugin, answers):
                    break
            except PLUGIN_FAILURES as exc:
                if self._failed(combiner, plugin, exc):
                    break
        return combiner if combiner.answers_itself else combiner.result()

    @staticmethod
    def _failed(combiner: Combiner, plugin: str, exc: BaseException) -> bool:
        """Tell ``combiner`` that ``plugin`` failed; whether that ends the call."""
        failure = HookFailure(plugin, combiner.hook, describe_exception(exc), exc)
        if combiner.fail(failure):
            return True
        if combiner.logs_failures:
            log.warning("hook.failed", plugin=plugin, hook=combiner.hook, error=failure.error)
        return False


def _declared(hook: str) -> Declared:
    declared = DECLARED.get(hook)
    if declared is None:
        raise LookupError(
            f"hook {hook} declares no calling rule: put @calling_rule(<rule>) from "
            "toolang_core.hookspecs.rules above its @hookspec"
        )
    return declared


class BoundHook:
    """One awaited hook of one runner with its declared rule's combiner and its
    :class:`Terms` looked up once. ``bound(kwargs)`` is ``runner.call_with(hook,
    terms, **kwargs)``: the same combiner, run by the same runner, without the look-up
    — for the tool-call chain's stages, which call their hooks on every tool call.
    Nothing of a call is kept: one bound hook serves concurrent calls."""

    __slots__ = ("_combiner", "_run", "_runner", "_terms", "hook")

    def __init__(self, runner: HookRunner, hook: str, terms: Terms = NO_TERMS) -> None:
        declared = _declared(hook)
        if not declared.awaited:
            raise ValueError(f"{hook} is not awaited: call it with call_with")
        self.hook = hook
        self._combiner = declared.rule.combiner
        self._runner = runner
        self._terms = terms
        # The runner's loop, its own copy for this hook's one combiner class (see
        # toolang_core.hookspecs.monomorphic): the chain's stages call it per tool call.
        self._run: Callable[[Combiner], Coroutine[Any, Any, Any]] = MethodType(
            own_copy(type(runner)._run), runner
        )

    def __call__(self, arguments: dict[str, Any]) -> Coroutine[Any, Any, Any]:
        """The call with ``arguments`` (the hook's keyword arguments, as a dict the call
        may change: a filter's modification): its coroutine, answering what the rule's
        combiner makes of it."""
        return self._run(self._combiner(self.hook, arguments, self._terms))


class BoundBroadcasts:
    """:meth:`HookRunner.call_each` of some awaited broadcasts, checked once:
    ``bound(kwargs)`` calls each hook in turn (those no plugin implements are passed
    over) and answers ``(hook, plugin, failure or None)`` for each implementation."""

    __slots__ = ("_runner", "hooks")

    def __init__(self, runner: HookRunner, hooks: Sequence[str]) -> None:
        for hook in hooks:
            declared = DECLARED[hook]
            if declared.rule is not BROADCAST or not declared.awaited:
                raise ValueError(f"{hook} is no awaited broadcast: call it alone")
        self.hooks = tuple(hooks)
        self._runner = runner

    def __call__(
        self, arguments: dict[str, Any]
    ) -> Coroutine[Any, Any, list[tuple[str, str, HookFailure | None]]]:
        """The calls with ``arguments`` (the hooks' keyword arguments): their coroutine
        (the runner's own: no coroutine around it)."""
        implemented = self._runner._calls
        outcomes: list[tuple[str, str, HookFailure | None]] = []
        called: list[Combiner] = []
        for hook in self.hooks:
            if implemented(hook):  # most hooks of the chain have no plugin
                called.append(Broadcast(hook, arguments, NO_TERMS, outcomes))  # one list for all
        if not called:
            return _answer(outcomes)
        return self._runner._run(*called)  # answers the first broadcast's outcomes: all
