"""toolang's pluggy ``PluginManager``: the hook specs, a name filter, per-plugin callers."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import pluggy

from toolang_core.hookspecs import spec_modules
from toolang_core.markers import HOOK_PREFIX, PROJECT_NAME


class ToolangPluginManager(pluggy.PluginManager):
    """A plugin manager that knows toolang's hook specifications.

    Only attributes named ``toolang_*`` are considered hook implementations, which
    makes registration several times faster under pluggy 1.7 and never touches
    unrelated attributes of a plugin object. Create one per runtime with
    :func:`create_plugin_manager`; never share one between runtimes.
    """

    def __init__(self) -> None:
        super().__init__(PROJECT_NAME)
        self._per_plugin: _PerHook[tuple[str, PluginCaller]] = _PerHook(self._callers_of)
        self._answering: _PerHook[tuple[str, Answers]] = _PerHook(self._answers_for)
        self._calls: _PerHook[tuple[str, Any, Arguments | None]] = _PerHook(self._calls_for)
        self._monitors = 0
        self._inactive: frozenset[tuple[str, str]] = frozenset()

    def add_hookcall_monitoring(self, before: Any, after: Any) -> Any:
        """pluggy's monitoring (also ``enable_tracing``); monitored calls then all go
        through pluggy's own callers."""
        self._forget_callers()
        self._monitors += 1
        undo = super().add_hookcall_monitoring(before, after)

        def undo_and_forget() -> None:
            undo()
            self._monitors -= 1
            self._forget_callers()

        return undo_and_forget

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> pluggy.HookimplOpts | None:
        if not name.startswith(HOOK_PREFIX):
            return None
        return super().parse_hookimpl_opts(plugin, name)

    def register(self, plugin: Any, name: str | None = None) -> str | None:
        self._forget_callers()
        return super().register(plugin, name)

    def unregister(self, plugin: Any | None = None, name: str | None = None) -> Any | None:
        self._forget_callers()
        return super().unregister(plugin, name)

    def set_inactive(self, pairs: Iterable[tuple[str, str]]) -> Callable[[], None]:
        """Leave each ``(plugin name, hook name)`` of ``pairs`` out of
        :meth:`per_plugin_callers` — the plugin said it has nothing to do in that hook
        (``toolang_inactive_hooks``) — until the returned undo is called; the pairs
        replace any left out before."""
        before = self._inactive
        self._inactive = frozenset(pairs)
        self._forget_callers()

        def undo() -> None:
            self._inactive = before
            self._forget_callers()

        return undo

    def _forget_callers(self) -> None:
        self._per_plugin.clear()
        self._answering.clear()
        self._calls.clear()

    def per_plugin_answers(self, hook_name: str) -> tuple[tuple[str, Answers], ...]:
        """The pairs of :meth:`per_plugin_callers`, each caller in the form the facade's
        runners call it: the keyword arguments as the one dict they already are (no
        repacking per call), answering the list of its non-``None`` answers."""
        return self._answering[hook_name]

    def per_plugin_callers(self, hook_name: str) -> tuple[tuple[str, PluginCaller], ...]:
        """Return ``(plugin name, caller)`` pairs for one hook, in pluggy's call order.

        Each caller runs only that plugin's implementation (and its wrappers), so the
        host can isolate errors, await results and know which plugin answered — keeping
        pluggy's ordering (``tryfirst``/``trylast``, last registered first) and wrappers.
        A plugin with exactly one plain implementation of the hook (no wrapper — the
        usual case) gets a :class:`DirectCaller`, which does what pluggy's call loop
        would do for it at a tenth of the cost (the tool-call chain makes seven such
        calls per tool call); any wrapper, or hook-call monitoring switched on, gets
        pluggy's own subset caller. The pairs are cached until the next ``register``
        or ``unregister``. A plugin :meth:`set_inactive` for the hook is left out.
        """
        return self._per_plugin[hook_name]

    @property
    def callers_lookup(self) -> Callable[[str], tuple[tuple[str, PluginCaller], ...]]:
        """:meth:`per_plugin_callers` as a look-up that costs no Python call once the
        hook's pairs are cached (the facade's runner binds it once and asks it several
        times per tool call)."""
        return self._per_plugin.__getitem__

    @property
    def answers_lookup(self) -> Callable[[str], tuple[tuple[str, Answers], ...]]:
        """:meth:`per_plugin_answers` as a look-up that costs no Python call once the
        hook's pairs are cached."""
        return self._answering.__getitem__

    @property
    def calls_lookup(self) -> Callable[[str], tuple[tuple[str, Any, Arguments | None], ...]]:
        """Per hook, ``(plugin name, function, arguments)`` in :meth:`per_plugin_callers`'
        order, for a runner that calls a plain implementation itself (one Python call
        less per plugin: the tool-call chain makes six per tool call): with
        ``arguments`` (a :class:`DirectCaller`'s), ``function(*arguments(kwargs))`` is
        the implementation's one answer or ``None``; without (``None``: a wrapper, or
        monitoring), ``function`` is the :meth:`per_plugin_answers` caller. No Python
        call once the hook's entries are cached."""
        return self._calls.__getitem__

    def _calls_for(self, hook_name: str) -> tuple[tuple[str, Any, Arguments | None], ...]:
        return tuple(
            (name, caller.function, caller.arguments)
            if isinstance(caller, DirectCaller)
            else (name, _answers_of(caller), None)
            for name, caller in self._per_plugin[hook_name]
        )

    def _answers_for(self, hook_name: str) -> tuple[tuple[str, Answers], ...]:
        return tuple((name, _answers_of(caller)) for name, caller in self._per_plugin[hook_name])

    def _callers_of(self, hook_name: str) -> tuple[tuple[str, PluginCaller], ...]:
        caller: pluggy.HookCaller = getattr(self.hook, hook_name)
        impls = caller.get_hookimpls()
        ordered: list[Any] = []
        for impl in reversed(impls):
            if impl.plugin not in ordered:
                ordered.append(impl.plugin)
        firstresult = bool(caller.spec is not None and caller.spec.opts.get("firstresult"))
        monitored = self._monitors > 0
        pairs: list[tuple[str, PluginCaller]] = []
        for plugin in ordered:
            name = self._name_of(plugin)
            if (name, hook_name) in self._inactive:
                continue
            own = [impl for impl in impls if impl.plugin is plugin]
            if not monitored and len(own) == 1 and not (own[0].hookwrapper or own[0].wrapper):
                pairs.append((name, DirectCaller(own[0], firstresult)))
            else:
                others = [p for p in ordered if p is not plugin]
                pairs.append((name, self.subset_hook_caller(hook_name, others)))
        return tuple(pairs)

    def _name_of(self, plugin: Any) -> str:
        name = self.get_name(plugin)
        return name if name is not None else repr(plugin)


_E = TypeVar("_E")


class _PerHook(dict[str, tuple[_E, ...]]):
    """Hook name → its entries (``(plugin name, caller, …)``), made by ``make`` on the first
    look-up and kept until :meth:`ToolangPluginManager._forget_callers` clears it
    (cleared, never replaced: a reader may hold its ``__getitem__``). A look-up of a
    cached hook is a plain dict look-up, with no Python call."""

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[str], tuple[_E, ...]]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, hook_name: str) -> tuple[_E, ...]:
        pairs = self[hook_name] = self._make(hook_name)
        return pairs


PluginCaller = Callable[..., Any]
"""Calls one plugin's implementation of a hook with the hook's keyword arguments."""

Arguments = Callable[[dict[str, Any]], tuple[Any, ...]]
"""Picks an implementation's positional arguments out of the hook's keyword arguments."""

Answers = Callable[[dict[str, Any]], list[Any]]
"""Calls one plugin's implementation with the hook's keyword arguments in one dict and
answers the list of its non-``None`` answers."""


def _answers_of(caller: PluginCaller) -> Answers:
    if isinstance(caller, DirectCaller):
        return caller.answers

    def answers(kwargs: dict[str, Any]) -> list[Any]:
        raw = caller(**kwargs)  # a list (broadcast) or one value (firstresult)
        if isinstance(raw, list):
            return raw
        return [] if raw is None else [raw]

    return answers


class DirectCaller:
    """One plain (non-wrapper) implementation, called as pluggy's loop calls it.

    Like pluggy: only the arguments the implementation declares are passed, positionally
    in its order; a broadcast hook answers a list of its non-``None`` results, a
    ``firstresult`` hook the result itself.
    """

    __slots__ = ("argnames", "arguments", "firstresult", "function")

    def __init__(self, impl: pluggy.HookImpl, firstresult: bool) -> None:
        self.function = impl.function
        self.argnames = impl.argnames
        self.firstresult = firstresult
        # The positional arguments out of the keyword arguments: an itemgetter picks
        # them at a third of a list comprehension's cost, but answers a bare value for
        # one name and cannot be made for none.
        names = tuple(impl.argnames)
        self.arguments: Arguments
        if len(names) > 1:
            self.arguments = operator.itemgetter(*names)
        elif names:
            self.arguments = lambda kwargs: (kwargs[names[0]],)
        else:
            self.arguments = lambda kwargs: ()

    def __call__(self, **kwargs: Any) -> Any:
        result = self.function(*self.arguments(kwargs))
        if self.firstresult:
            return result
        return [] if result is None else [result]

    def answers(self, kwargs: dict[str, Any]) -> list[Any]:
        """The call with the keyword arguments as a dict, answering a list either way."""
        result = self.function(*self.arguments(kwargs))
        return [] if result is None else [result]


def create_plugin_manager(extra_specs: Iterable[Any] = ()) -> ToolangPluginManager:
    """Return a fresh manager with every toolang hook specification and no plugins."""
    pm = ToolangPluginManager()
    for module in (*spec_modules(), *extra_specs):
        pm.add_hookspecs(module)
    return pm
