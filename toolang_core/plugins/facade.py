"""The typed facade through which core code calls hooks.

pluggy cannot type ``pm.hook.<name>(...)`` calls; this class gives every call site a
checked signature and puts the calling rules in one place: one plugin at a time in
pluggy's order, awaitables awaited, errors isolated per plugin and reported as
:class:`HookFailure` values instead of exceptions.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs
import structlog

from toolang_core.errors import describe_exception
from toolang_core.hookspecs import TOOL_CHAIN, TOOL_CHAIN_STAGES
from toolang_core.tools.types import (
    ApprovalDecision,
    AskApproval,
    Block,
    Denied,
    FilterVerdict,
    Modify,
    ToolCall,
    ToolResult,
)

if TYPE_CHECKING:
    from toolang_core.agents.routing import RouteProposal
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.events import Event
    from toolang_core.plugins.host import PluginHost
    from toolang_core.plugins.routes import RouteRegistration
    from toolang_core.runtime import Runtime
    from toolang_core.store.types import TurnRequest
    from toolang_core.taskruns.types import TaskRun
    from toolang_core.tools.types import ToolCallContext

log = structlog.get_logger("toolang.hooks")

OBSERVING_HOOKS: Final = TOOL_CHAIN[TOOL_CHAIN.index("toolang_filter_tool_result") + 1 :]
"""The chain's hooks after the result filter (LearningObserver, KnowledgeSaver,
EventPublisher), in chain order."""


@attrs.frozen
class HookFailure:
    """An implementation raised; the call went on without it."""

    plugin: str
    hook: str
    error: str


@attrs.frozen
class FilterOutcome:
    """What the SecurityFilter stage decided.

    ``call`` carries the parameters after every ``Modify``; ``verdicts`` lists each
    non-abstaining filter's verdict in order; ``blocked`` is set when one blocked.
    """

    call: ToolCall
    verdicts: tuple[tuple[str, FilterVerdict], ...] = ()
    blocked: tuple[str, Block] | None = None
    failures: tuple[HookFailure, ...] = ()


@attrs.frozen
class ApprovalOutcome:
    """The deciding gate and its decision (``None`` plugin: every gate abstained)."""

    plugin: str | None
    decision: ApprovalDecision | None
    failures: tuple[HookFailure, ...] = ()


NO_DECISION: Final = ApprovalOutcome(None, None)
"""Every gate abstained (most tool calls): one frozen value, not one per call."""


async def _resolve(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _pending(value: Any) -> bool:
    """Whether a hook's answer must be awaited (cheaper than a coroutine per answer:
    the tool-call chain asks this several times per tool call)."""
    return value is not None and hasattr(value, "__await__")


def _results(raw: Any) -> list[Any]:
    # A single-plugin caller returns a list (broadcast) or one value (firstresult).
    if isinstance(raw, list):
        return raw
    return [] if raw is None else [raw]


class Hooks:
    """Typed access to every toolang hook of one :class:`PluginHost`."""

    def __init__(self, host: PluginHost) -> None:
        self._host = host

    def implementations(self, hook: str) -> list[str]:
        """Names of the plugins implementing ``hook``, in the order they are called."""
        return [name for name, _ in self._host.pm.per_plugin_callers(hook)]

    def chain(self) -> list[tuple[str, str, list[str]]]:
        """The tool-call chain as registered: ``(stage, hook, plugins in call order)``.

        ``execute`` marks where the tool runs; its plugin list is always empty."""
        return [
            (TOOL_CHAIN_STAGES[hook], hook, [] if hook == "execute" else self.implementations(hook))
            for hook in TOOL_CHAIN
        ]

    async def _broadcast(self, hook: str, **kwargs: Any) -> list[HookFailure]:
        failures = []
        for plugin, caller in self._host.pm.per_plugin_callers(hook):
            try:
                for value in _results(caller(**kwargs)):
                    await _resolve(value)
            except Exception as exc:
                failure = HookFailure(plugin, hook, describe_exception(exc))
                log.warning("hook.failed", plugin=plugin, hook=hook, error=failure.error)
                failures.append(failure)
        return failures

    # -- lifecycle -------------------------------------------------------------------

    async def startup(self, runtime: Runtime) -> list[HookFailure]:
        return await self._broadcast("toolang_startup", runtime=runtime)

    async def shutdown(self, runtime: Runtime, reason: str = "stop") -> list[HookFailure]:
        return await self._broadcast("toolang_shutdown", runtime=runtime, reason=reason)

    # -- events ----------------------------------------------------------------------

    async def on_event(self, event: Event, runtime: Runtime) -> list[HookFailure]:
        return await self._broadcast("toolang_on_event", event=event, runtime=runtime)

    # -- the tool-call chain ---------------------------------------------------------

    async def filter_tool_call(self, call: ToolCall, ctx: ToolCallContext) -> FilterOutcome:
        """Ask every SecurityFilter in turn until one blocks.

        A filter that raises blocks the call: a broken security filter fails closed.
        """
        verdicts: list[tuple[str, FilterVerdict]] = []
        failures: list[HookFailure] = []
        hook = "toolang_filter_tool_call"
        for plugin, caller in self._host.pm.per_plugin_callers(hook):
            try:
                # A loop, not a comprehension: one holding an await is a coroutine of its own.
                answers = []
                for value in _results(caller(call=call, ctx=ctx)):
                    answers.append(await value if _pending(value) else value)
            except Exception as exc:
                failure = HookFailure(plugin, hook, describe_exception(exc))
                failures.append(failure)
                block = Block(f"security filter {plugin!r} failed: {failure.error}")
                return FilterOutcome(call, tuple(verdicts), (plugin, block), tuple(failures))
            for verdict in answers:
                if verdict is None:
                    continue
                verdicts.append((plugin, verdict))
                if isinstance(verdict, Block):
                    return FilterOutcome(call, tuple(verdicts), (plugin, verdict), tuple(failures))
                params = verdict.params if isinstance(verdict, Modify | AskApproval) else None
                if params is not None:
                    call = attrs.evolve(call, params=dict(params))
                    ctx = attrs.evolve(ctx, call=call)
        return FilterOutcome(call, tuple(verdicts), None, tuple(failures))

    async def approve_tool_call(self, call: ToolCall, ctx: ToolCallContext) -> ApprovalOutcome:
        """Ask the ApprovalGates in turn; the first decision wins.

        A gate that raises denies the call: a broken gate fails closed.
        """
        hook = "toolang_approve_tool_call"
        for plugin, caller in self._host.pm.per_plugin_callers(hook):
            try:
                for value in _results(caller(call=call, ctx=ctx)):
                    decision = await value if _pending(value) else value
                    if decision is not None:
                        return ApprovalOutcome(plugin, decision)
            except Exception as exc:
                failure = HookFailure(plugin, hook, describe_exception(exc))
                denied = Denied(f"approval gate {plugin!r} failed: {failure.error}")
                return ApprovalOutcome(plugin, denied, (failure,))
        return NO_DECISION

    async def filter_tool_result(
        self, call: ToolCall, result: ToolResult, ctx: ToolCallContext
    ) -> tuple[ToolResult, tuple[tuple[str, str], ...], tuple[HookFailure, ...]]:
        """Let every result filter replace the result in turn; ``(result, changed-by
        (plugin, reason) pairs, failures)``. A filter that raises fails closed."""
        hook = "toolang_filter_tool_result"
        changed: list[tuple[str, str]] = []
        for plugin, caller in self._host.pm.per_plugin_callers(hook):
            try:
                for value in _results(caller(call=call, result=result, ctx=ctx)):
                    replacement = await value if _pending(value) else value
                    if replacement is not None:
                        result = replacement
                        changed.append((plugin, "modified the result"))
            except Exception as exc:
                failure = HookFailure(plugin, hook, describe_exception(exc))
                withheld = ToolResult(
                    ok=False,
                    error=f"result withheld: security filter {plugin!r} failed ({failure.error})",
                    error_type="filter_failed",
                )
                return withheld, tuple(changed), (failure,)
        return result, tuple(changed), ()

    def prompt_notes(self, agent: str, thread_id: str, runtime: Runtime) -> list[str]:
        """Every plugin's note for the next prompt (a failing plugin is skipped)."""
        notes: list[str] = []
        for plugin, caller in self._host.pm.per_plugin_callers("toolang_prompt_notes"):
            try:
                notes.extend(
                    str(n)
                    for n in _results(caller(agent=agent, thread_id=thread_id, runtime=runtime))
                    if n
                )
            except Exception as exc:
                log.warning(
                    "hook.failed",
                    plugin=plugin,
                    hook="toolang_prompt_notes",
                    error=describe_exception(exc),
                )
        return notes

    async def route(
        self, request: str, agents: Sequence[AgentDefinition]
    ) -> tuple[RouteProposal | None, tuple[HookFailure, ...]]:
        """Ask every router; the highest score wins (a tie: the router asked first).

        A proposal naming an agent not among ``agents`` is ignored; a router that
        raises is skipped and reported."""
        hook = "toolang_route"
        names = {agent.name for agent in agents}
        best: RouteProposal | None = None
        failures: list[HookFailure] = []
        for plugin, caller in self._host.pm.per_plugin_callers(hook):
            try:
                for value in _results(caller(request=request, agents=agents)):
                    proposal = await _resolve(value)
                    if proposal is None or proposal.agent not in names:
                        continue
                    if best is None or proposal.score > best.score:
                        best = attrs.evolve(proposal, router=plugin)
            except Exception as exc:
                failure = HookFailure(plugin, hook, describe_exception(exc))
                log.warning("hook.failed", plugin=plugin, hook=hook, error=failure.error)
                failures.append(failure)
        return best, tuple(failures)

    async def observe_tool_result(
        self, call: ToolCall, result: ToolResult, ctx: ToolCallContext
    ) -> list[tuple[str, HookFailure | None]]:
        return await self._each("toolang_observe_tool_result", call=call, result=result, ctx=ctx)

    async def save_knowledge(
        self, call: ToolCall, result: ToolResult, ctx: ToolCallContext
    ) -> list[tuple[str, HookFailure | None]]:
        return await self._each("toolang_save_knowledge", call=call, result=result, ctx=ctx)

    async def publish_event(
        self, call: ToolCall, result: ToolResult, ctx: ToolCallContext
    ) -> list[tuple[str, HookFailure | None]]:
        return await self._each("toolang_publish_event", call=call, result=result, ctx=ctx)

    async def after_tool_call(
        self, call: ToolCall, result: ToolResult, ctx: ToolCallContext
    ) -> list[tuple[str, str, HookFailure | None]]:
        """The observing stages of the chain in order — every LearningObserver, then
        every KnowledgeSaver, then every EventPublisher — each implementation isolated;
        ``(hook, plugin, failure or None)`` for each."""
        return await self._each_of(OBSERVING_HOOKS, {"call": call, "result": result, "ctx": ctx})

    async def deliver_turn(
        self, turn: TurnRequest, runtime: Runtime
    ) -> list[tuple[str, HookFailure | None]]:
        return await self._each("toolang_deliver_turn", turn=turn, runtime=runtime)

    # -- HTTP routes -------------------------------------------------------------------

    def register_routes(self) -> tuple[list[RouteRegistration], list[HookFailure]]:
        """Every plugin's HTTP routes (``toolang_register_routes``) and the plugins whose
        registration failed; see :func:`toolang_core.plugins.routes.collect_routes`."""
        from toolang_core.plugins.routes import collect_routes

        return collect_routes(self._host)

    # -- task runs -----------------------------------------------------------------------

    async def finalize_task_run(
        self, run: TaskRun, runtime: Runtime, *, timeout_seconds: float = 60.0
    ) -> tuple[dict[str, str], list[HookFailure]]:
        """Every finalizer's metadata merged in call order (trimmed, empty keys dropped);
        one that raises or overruns ``timeout_seconds`` adds nothing."""
        hook = "toolang_finalize_task_run"
        merged: dict[str, str] = {}
        failures: list[HookFailure] = []
        for plugin, caller in self._host.pm.per_plugin_callers(hook):
            try:
                async with asyncio.timeout(timeout_seconds):
                    for value in _results(caller(run=run, runtime=runtime)):
                        metadata = await _resolve(value)
                        for key, item in (metadata or {}).items():
                            if str(key).strip():
                                merged[str(key).strip()] = str(item).strip()
            except Exception as exc:
                failure = HookFailure(plugin, hook, describe_exception(exc))
                log.warning("hook.failed", plugin=plugin, hook=hook, error=failure.error)
                failures.append(failure)
        return merged, failures

    async def observe_task_run(self, run: TaskRun, runtime: Runtime) -> list[HookFailure]:
        return await self._broadcast("toolang_observe_task_run", run=run, runtime=runtime)

    async def _each(self, hook: str, **kwargs: Any) -> list[tuple[str, HookFailure | None]]:
        """Call every implementation, isolated; ``(plugin, failure or None)`` for each."""
        return [(plugin, failure) for _, plugin, failure in await self._each_of((hook,), kwargs)]

    async def _each_of(
        self, hooks: Sequence[str], kwargs: dict[str, Any]
    ) -> list[tuple[str, str, HookFailure | None]]:
        """Call every implementation of each of ``hooks`` in turn, isolated (an awaitable
        answer is awaited before the next one is called); ``(hook, plugin, failure or
        None)`` for each. One coroutine for several hooks: the tool-call chain calls
        three such hooks per tool call, and most answers need no awaiting."""
        outcomes: list[tuple[str, str, HookFailure | None]] = []
        for hook in hooks:
            for plugin, caller in self._host.pm.per_plugin_callers(hook):
                try:
                    for value in _results(caller(**kwargs)):
                        if _pending(value):
                            await value
                except Exception as exc:
                    failure = HookFailure(plugin, hook, describe_exception(exc))
                    log.warning("hook.failed", plugin=plugin, hook=hook, error=failure.error)
                    outcomes.append((hook, plugin, failure))
                else:
                    outcomes.append((hook, plugin, None))
        return outcomes
