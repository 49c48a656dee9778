"""The typed facade through which core code calls hooks.

pluggy cannot type ``pm.hook.<name>(...)`` calls; this class gives every call site a
checked signature and puts the calling rules in one place: one plugin at a time in
pluggy's order, awaitables awaited, errors isolated per plugin and reported as
:class:`HookFailure` values instead of exceptions. The tool-call chain's stages call
their hooks through the same runners (:meth:`Hooks.in_turn`, :meth:`Hooks.each_of`)
from :mod:`toolang_core.tools.stages`.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs
import structlog

from toolang_core.errors import describe_exception
from toolang_core.hookspecs import TOOL_CHAIN, TOOL_CHAIN_STAGES, lifecycle
from toolang_core.hookspecs.rules import HOOK_RULES, REGISTRATION, HookFailure, Refused
from toolang_core.markers import HOOK_PREFIX

if TYPE_CHECKING:
    from toolang_core.agents.routing import RouteProposal
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.events import Event
    from toolang_core.plugins.host import PluginHost
    from toolang_core.plugins.required import RequiredProblem
    from toolang_core.plugins.routes import RouteRegistration
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.store.types import TurnRequest
    from toolang_core.taskruns.types import TaskRun
    from toolang_core.tools.stages import ApprovalOutcome, FilterOutcome
    from toolang_core.tools.types import ToolCall, ToolCallContext, ToolResult

log = structlog.get_logger("toolang.hooks")

ALWAYS_CALLED: Final = frozenset(
    {*TOOL_CHAIN, *(name for name in vars(lifecycle) if name.startswith(HOOK_PREFIX))}
    | {hook for hook, rule in HOOK_RULES.items() if rule is REGISTRATION}
)
"""Hooks no plugin can declare inactive (``toolang_inactive_hooks``): every stage plugin
of the tool-call chain sees every call; start-up, shutdown and registration are not
turn-time work."""


def _moved(name: str) -> None:
    warnings.warn(
        f"Hooks.{name} is deprecated since toolang-core 0.2 and removed in 0.3: call "
        f"toolang_core.testing.{name}(hooks, ...) (the tool-call chain's stages moved to "
        "toolang_core.tools.stages)",
        DeprecationWarning,
        stacklevel=3,
    )


def _pending(value: Any) -> bool:
    """Whether a hook's answer must be awaited (cheaper than a coroutine per answer:
    the tool-call chain asks this several times per tool call)."""
    return value is not None and hasattr(value, "__await__")


class Hooks:
    """Typed access to every toolang hook of one :class:`PluginHost`."""

    def __init__(self, host: PluginHost) -> None:
        self._host = host
        self.callers = host.pm.per_plugin_callers
        """``callers(hook)``: ``(plugin, caller)`` pairs in call order, empty when no
        plugin implements ``hook`` (bound once: the tool-call chain asks per stage)."""
        self._answering = host.pm.per_plugin_answers

    def implemented(self, hook: str) -> bool:
        """Whether any plugin implements ``hook`` (asked before a call that would cost
        a coroutine for nothing)."""
        return bool(self._host.pm.per_plugin_callers(hook))

    def implementations(self, hook: str) -> list[str]:
        """Names of the plugins implementing ``hook``, in the order they are called."""
        return [name for name, _ in self._host.pm.per_plugin_callers(hook)]

    def required_problem(self) -> RequiredProblem | None:
        """Why no tool may run now — a required plugin is missing, failed or broke
        (``PluginHost.required_problems``) — or ``None``. Asked before every tool call."""
        problems = self._host.required_problems()
        return problems[0] if problems else None

    def is_required(self, plugin: str) -> bool:
        """Whether ``plugin`` is required: a raise in its hook withholds a call's result."""
        return self._host.is_required(plugin)

    def chain(self) -> list[tuple[str, str, list[str]]]:
        """The tool-call chain as registered: ``(stage, hook, plugins in call order)``.

        ``execute`` marks where the tool runs; its plugin list is always empty."""
        return [
            (TOOL_CHAIN_STAGES[hook], hook, [] if hook == "execute" else self.implementations(hook))
            for hook in TOOL_CHAIN
        ]

    # -- the runners: every hook is called through one of these, by its declared rule --

    async def in_turn(
        self,
        hook: str,
        kwargs: dict[str, Any],
        take: Callable[[str, list[Any]], Any],
        *,
        timeout: float | None = None,
    ) -> tuple[Any, list[HookFailure]]:
        """Ask ``hook``'s implementations one plugin at a time, by its calling rule
        (:data:`~toolang_core.hookspecs.rules.HOOK_RULES`).

        Each plugin's answers, awaited, go to ``take(plugin, answers)``; a value other
        than ``None`` ends the call and is returned. ``kwargs`` is read afresh for each
        plugin, so ``take`` may change what the later ones see. A plugin that raises (or
        overruns ``timeout``) ends the call with :class:`Refused` under a fail-closed
        rule; otherwise it is logged, reported and skipped. Returns ``(the ending value
        or None, failures)``."""
        fail_closed = HOOK_RULES[hook].fail_closed
        failures: list[HookFailure] = []
        for plugin, answer in self._answering(hook):
            answers: list[Any] = []
            try:
                # A loop, not a comprehension: one holding an await is a coroutine of its own.
                if timeout is None:
                    for value in answer(kwargs):
                        answers.append(await value if _pending(value) else value)
                else:
                    async with asyncio.timeout(timeout):
                        for value in answer(kwargs):
                            answers.append(await value if _pending(value) else value)
                # Inside the try: an answer take() cannot use (a finalizer's metadata that
                # is no mapping) is that plugin's failure, like a raise.
                ended = take(plugin, answers)
            except Exception as exc:
                failure = HookFailure(plugin, hook, describe_exception(exc))
                failures.append(failure)
                if fail_closed:
                    return Refused(plugin, failure), failures
                log.warning("hook.failed", plugin=plugin, hook=hook, error=failure.error)
                continue
            if ended is not None:
                return ended, failures
        return None, failures

    def _now(
        self, hook: str, kwargs: dict[str, Any], failures: list[HookFailure] | None = None
    ) -> list[tuple[str, list[Any]]]:
        """Call every implementation of a synchronous ``hook`` (its answers are not
        awaited); ``(plugin, answers)`` for each, a plugin that raises logged, added to
        ``failures`` when given, and left out (only rules that skip a failure call hooks
        this way)."""
        answered: list[tuple[str, list[Any]]] = []
        for plugin, answer in self._answering(hook):
            try:
                answered.append((plugin, answer(kwargs)))
            except Exception as exc:
                error = describe_exception(exc)
                log.warning("hook.failed", plugin=plugin, hook=hook, error=error)
                if failures is not None:
                    failures.append(HookFailure(plugin, hook, error))
        return answered

    async def _broadcast(self, hook: str, **kwargs: Any) -> list[HookFailure]:
        return [failure for _, _, failure in await self.each_of((hook,), kwargs) if failure]

    # -- deprecated since 0.2, removed in 0.3 --------------------------------------------

    # Plain methods answering the coroutine, so the warning names the caller's line.

    def filter_tool_call(
        self, call: ToolCall, ctx: ToolCallContext
    ) -> Coroutine[Any, Any, FilterOutcome]:
        """Deprecated: ``toolang_core.testing.filter_tool_call(hooks, call, ctx)``."""
        _moved("filter_tool_call")
        from toolang_core.tools import stages

        return stages.filter_tool_call(self, call, ctx)

    def approve_tool_call(
        self, call: ToolCall, ctx: ToolCallContext
    ) -> Coroutine[Any, Any, ApprovalOutcome]:
        """Deprecated: ``toolang_core.testing.approve_tool_call(hooks, call, ctx)``."""
        _moved("approve_tool_call")
        from toolang_core.tools import stages

        return stages.approve_tool_call(self, call, ctx)

    def filter_tool_result(
        self, call: ToolCall, result: ToolResult, ctx: ToolCallContext
    ) -> Coroutine[
        Any, Any, tuple[ToolResult, tuple[tuple[str, str], ...], tuple[HookFailure, ...]]
    ]:
        """Deprecated: ``toolang_core.testing.filter_tool_result(hooks, call, result, ctx)``."""
        _moved("filter_tool_result")
        from toolang_core.tools import stages

        return stages.filter_tool_result(self, call, result, ctx)

    # -- lifecycle -------------------------------------------------------------------

    async def startup(self, runtime: RuntimeView) -> list[HookFailure]:
        return await self._broadcast("toolang_startup", runtime=runtime)

    async def shutdown(self, runtime: RuntimeView, reason: str = "stop") -> list[HookFailure]:
        return await self._broadcast("toolang_shutdown", runtime=runtime, reason=reason)

    def leave_out_inactive(self, runtime: RuntimeView) -> Callable[[], None]:
        """Ask every plugin which of its hooks have nothing to do in ``runtime``'s run
        (``toolang_inactive_hooks``) and call none of those until the returned undo is
        called (the runtime does when it stops serving).

        A name that is not a hook the plugin implements, or one of :data:`ALWAYS_CALLED`,
        is logged and ignored; so is an answer that is no collection of names."""
        pm = self._host.pm
        pm.set_inactive(())  # a previous run's answers do not decide what is asked now
        pairs: list[tuple[str, str]] = []
        for plugin, answers in self._now("toolang_inactive_hooks", {"runtime": runtime}):
            for names in answers:
                if isinstance(names, str) or not isinstance(names, Iterable):
                    log.warning(
                        "hook.inactive_ignored",
                        plugin=plugin,
                        hook="toolang_inactive_hooks",
                        error=f"expected a collection of hook names, got {names!r}",
                    )
                    continue
                for name in names:
                    problem = self._why_not_inactive(plugin, name)
                    if problem is not None:
                        log.warning(
                            "hook.inactive_ignored", plugin=plugin, hook=name, error=problem
                        )
                        continue
                    pairs.append((plugin, name))
        return pm.set_inactive(pairs)

    def _why_not_inactive(self, plugin: str, name: object) -> str | None:
        """Why ``plugin`` cannot leave hook ``name`` out, or ``None`` when it can."""
        if not (isinstance(name, str) and name.startswith(HOOK_PREFIX)) or not hasattr(
            self._host.pm.hook, name
        ):
            return f"{name!r} is not a toolang hook"
        if name in ALWAYS_CALLED:
            return f"{name} is always called (the tool-call chain, lifecycle and registration)"
        if plugin not in self.implementations(name):
            return f"the plugin does not implement {name}"
        return None

    # -- events ----------------------------------------------------------------------

    async def on_event(self, event: Event, runtime: RuntimeView) -> list[HookFailure]:
        return await self._broadcast("toolang_on_event", event=event, runtime=runtime)

    def prompt_notes(self, agent: str, thread_id: str, runtime: RuntimeView) -> list[str]:
        """Every plugin's note for the next prompt (a failing plugin is skipped)."""
        kwargs = {"agent": agent, "thread_id": thread_id, "runtime": runtime}
        answered = self._now("toolang_prompt_notes", kwargs)
        return [str(note) for _, notes in answered for note in notes if note]

    async def route(
        self, request: str, agents: Sequence[AgentDefinition]
    ) -> tuple[RouteProposal | None, tuple[HookFailure, ...]]:
        """Ask every router; the highest score wins (a tie: the router asked first).

        A proposal naming an agent not among ``agents`` is ignored; a router that
        raises is skipped and reported."""
        names: set[str] = set()  # made for the first proposal: most requests get none
        best: list[RouteProposal] = []  # the best so far, when there is one

        def take(plugin: str, answers: list[Any]) -> None:
            for proposal in answers:
                if not names:
                    names.update(agent.name for agent in agents)
                if proposal.agent not in names:
                    continue
                if not best or proposal.score > best[0].score:
                    best[:] = [attrs.evolve(proposal, router=plugin)]

        kwargs = {"request": request, "agents": agents}
        _, failures = await self.in_turn("toolang_route", kwargs, take)
        return (best[0] if best else None), tuple(failures)

    async def deliver_turn(
        self, turn: TurnRequest, runtime: RuntimeView
    ) -> list[tuple[str, HookFailure | None]]:
        return await self._each("toolang_deliver_turn", turn=turn, runtime=runtime)

    # -- observability -------------------------------------------------------------------

    def observes_turns(self) -> bool:
        """Whether any plugin implements the turn hooks (asked once per run, so a
        runtime nobody watches pays nothing on its turns' path)."""
        pm = self._host.pm
        return any(
            pm.per_plugin_callers(hook)
            for hook in ("toolang_turn_started", "toolang_turn_step", "toolang_turn_finished")
        )

    def observe(self, hook: str, **kwargs: Any) -> None:
        """Call a turn hook (``toolang_turn_started|step|finished``) on every plugin,
        synchronously, each isolated: one that raises is logged and the others run."""
        self._now(hook, kwargs)

    def outbound_headers(self, turn: TurnRequest, key: str, runtime: RuntimeView) -> dict[str, str]:
        """Every plugin's ``toolang_outbound_headers`` merged in call order (a later
        header replaces an earlier one); a plugin that raises is logged and skipped, an
        answer that is no mapping is ignored."""
        merged: dict[str, str] = {}
        kwargs = {"turn": turn, "key": key, "runtime": runtime}
        for _, answers in self._now("toolang_outbound_headers", kwargs):
            for headers in answers:
                if isinstance(headers, Mapping):
                    merged.update((str(name), str(value)) for name, value in headers.items())
        return merged

    def doctor_checks(self, runtime: RuntimeView) -> list[tuple[str, Any]]:
        """Every plugin's ``toolang_doctor_checks`` findings as ``(plugin, findings)``;
        a plugin that raised gives a :class:`RuntimeError` saying why in place of them."""
        failures: list[HookFailure] = []
        answered = self._now("toolang_doctor_checks", {"runtime": runtime}, failures)
        found: list[tuple[str, Any]] = [
            (plugin, list(value or ())) for plugin, values in answered for value in values
        ]
        found += [(f.plugin, RuntimeError(f.error)) for f in failures]
        return found

    # -- the agent pool and teams --------------------------------------------------------

    def score_agent(self, member: Any, capability: str) -> float | None:
        """The first score a ``toolang_score_agent`` plugin gives ``member`` for
        ``capability`` (``None``: the pool's own score); one that raises is skipped."""
        for _, answers in self._now(
            "toolang_score_agent", {"member": member, "capability": capability}
        ):
            for value in answers:
                if value is not None:
                    return float(value)
        return None

    def ping_agents(self, agents: Sequence[Any], runtime: RuntimeView) -> dict[str, Any]:
        """Every ``toolang_ping_agents`` answer merged by agent name (a later plugin's
        answer for an agent replaces an earlier one); one that raises is skipped."""
        found: dict[str, Any] = {}
        for _, answers in self._now("toolang_ping_agents", {"agents": agents, "runtime": runtime}):
            for health in answers:
                found.update(health or {})
        return found

    def agree_payment(self, team_id: str, terms: Any) -> None:
        """Tell every ``toolang_agree_payment`` plugin of a team member's payment terms,
        each isolated."""
        self._now("toolang_agree_payment", {"team_id": team_id, "terms": terms})

    # -- HTTP routes -------------------------------------------------------------------

    def route_servers(self, runtime: RuntimeView) -> list[tuple[str, str]]:
        """``(plugin, base URL)`` of every plugin that serves the registered routes in
        ``runtime``'s run (``toolang_serves_routes``), in call order; one that raises is
        logged and skipped, an answer that is no non-empty string is ignored."""
        return [
            (plugin, answer)
            for plugin, answers in self._now("toolang_serves_routes", {"runtime": runtime})
            for answer in answers
            if isinstance(answer, str) and answer
        ]

    def register_routes(self) -> tuple[list[RouteRegistration], list[HookFailure]]:
        """Every plugin's HTTP routes (``toolang_register_routes``) and the plugins whose
        registration failed; see :func:`toolang_core.plugins.routes.collect_routes`."""
        from toolang_core.plugins.routes import collect_routes

        return collect_routes(self._host)

    # -- task runs -----------------------------------------------------------------------

    async def finalize_task_run(
        self, run: TaskRun, runtime: RuntimeView, *, timeout_seconds: float = 60.0
    ) -> tuple[dict[str, str], list[HookFailure]]:
        """Every finalizer's metadata merged in call order (trimmed, empty keys dropped);
        one that raises or overruns ``timeout_seconds`` adds nothing."""
        merged: dict[str, str] = {}

        def take(plugin: str, answers: list[Any]) -> None:
            for metadata in answers:
                for key, item in (metadata or {}).items():
                    if str(key).strip():
                        merged[str(key).strip()] = str(item).strip()

        kwargs = {"run": run, "runtime": runtime}
        _, failures = await self.in_turn(
            "toolang_finalize_task_run", kwargs, take, timeout=timeout_seconds
        )
        return merged, failures

    async def observe_task_run(self, run: TaskRun, runtime: RuntimeView) -> list[HookFailure]:
        return await self._broadcast("toolang_observe_task_run", run=run, runtime=runtime)

    async def _each(self, hook: str, **kwargs: Any) -> list[tuple[str, HookFailure | None]]:
        """Call every implementation, isolated; ``(plugin, failure or None)`` for each."""
        return [(plugin, failure) for _, plugin, failure in await self.each_of((hook,), kwargs)]

    async def each_of(
        self, hooks: Sequence[str], kwargs: dict[str, Any]
    ) -> list[tuple[str, str, HookFailure | None]]:
        """Call every implementation of each of ``hooks`` in turn, isolated (an awaitable
        answer is awaited before the next one is called); ``(hook, plugin, failure or
        None)`` for each. One coroutine for several hooks: the tool-call chain calls
        three such hooks per tool call, and most answers need no awaiting."""
        outcomes: list[tuple[str, str, HookFailure | None]] = []
        for hook in hooks:
            for plugin, answer in self._answering(hook):
                try:
                    for value in answer(kwargs):
                        if _pending(value):
                            await value
                except Exception as exc:
                    failure = HookFailure(plugin, hook, describe_exception(exc))
                    log.warning("hook.failed", plugin=plugin, hook=hook, error=failure.error)
                    outcomes.append((hook, plugin, failure))
                else:
                    outcomes.append((hook, plugin, None))
        return outcomes
