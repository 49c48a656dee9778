"""The typed facade through which core code calls hooks.

pluggy cannot type ``pm.hook.<name>(...)`` calls; :class:`Hooks` gives every call site
a checked signature, in the manner of tox's ``plugin/manager.py``: one short wrapper
per hook over the one generic call (:meth:`~toolang_core.plugins.runner.HookRunner.call`,
which runs the hook by its declared calling rule and its rule's combiner), plus the
shaping of the combined answer into the wrapper's type. No wrapper combines answers
itself. The tool-call chain's stages (:mod:`toolang_core.tools.stages`) call their
hooks the same way.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Coroutine, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs
import structlog

from toolang_core.errors import ToolangError
from toolang_core.hookspecs import TOOL_CHAIN, TOOL_CHAIN_STAGES, guards, lifecycle
from toolang_core.hookspecs.combiners import Terms
from toolang_core.hookspecs.rules import HOOK_RULES, REGISTRATION, HookFailure
from toolang_core.markers import HOOK_PREFIX
from toolang_core.plugins.runner import HookRunner

if TYPE_CHECKING:
    from toolang_core.agents.routing import RouteProposal
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.events import Event
    from toolang_core.execution.seam import StageDone
    from toolang_core.plugins.host_port import FacadeHost
    from toolang_core.plugins.required import RequiredProblem
    from toolang_core.plugins.routes import RouteRegistration
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.store.types import StepRecord, TurnRequest
    from toolang_core.taskruns.types import TaskRun
    from toolang_core.tools.stages import ApprovalOutcome, FilterOutcome
    from toolang_core.tools.types import ToolCall, ToolCallContext, ToolOffer, ToolResult

log = structlog.get_logger("toolang.hooks")

ALWAYS_CALLED: Final = frozenset(
    {
        *TOOL_CHAIN,
        *(
            name
            for module in (lifecycle, guards)
            for name in vars(module)
            if name.startswith(HOOK_PREFIX)
        ),
    }
    | {hook for hook, rule in HOOK_RULES.items() if rule is REGISTRATION}
)
"""Hooks no plugin can declare inactive (``toolang_inactive_hooks``): every stage plugin
of the tool-call chain sees every call, every guardrail every model call; start-up,
shutdown and registration are not turn-time work."""


def _moved(name: str) -> None:
    warnings.warn(
        f"Hooks.{name} is deprecated since toolang-core 0.2 and removed in 0.3: call "
        f"toolang_core.testing.{name}(hooks, ...) (the tool-call chain's stages moved to "
        "toolang_core.tools.stages)",
        DeprecationWarning,
        stacklevel=3,
    )


class Hooks(HookRunner):
    """Typed access to every toolang hook of one :class:`PluginHost`: one short wrapper
    per hook over :meth:`HookRunner.call`."""

    def __init__(self, host: FacadeHost) -> None:
        super().__init__(host.pm)
        self._host = host
        self.required_problems = host.required_problems
        """``required_problems()``: why no tool may run now — each required plugin that
        is missing, failed or broke (:meth:`PluginHost.required_problems`); empty when
        none is. Bound once: the tool-call chain asks before every tool call."""

    def required_problem(self) -> RequiredProblem | None:
        """The first of :attr:`required_problems`, or ``None``."""
        problems = self.required_problems()
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

    # -- the typed wrappers: one per hook, each through :meth:`call` ----------------------

    # lifecycle

    async def startup(self, runtime: RuntimeView) -> list[HookFailure]:
        return _failures(await self.call("toolang_startup", runtime=runtime))

    async def offer_tools(
        self, runtime: RuntimeView, offer_for: Callable[[str], ToolOffer]
    ) -> list[HookFailure]:
        """Ask each plugin implementing ``toolang_offer_tools`` for its run's tools,
        handing it ``offer_for(plugin)`` — its own offer."""
        failures: list[HookFailure] = []
        for plugin in self.implementations("toolang_offer_tools"):
            done = await self.call_with(
                "toolang_offer_tools", Terms(only=plugin), runtime=runtime, tools=offer_for(plugin)
            )
            failures.extend(_failures(done))
        return failures

    async def upkeep(self, runtime: RuntimeView) -> list[HookFailure]:
        return _failures(await self.call("toolang_upkeep", runtime=runtime))

    async def shutdown(self, runtime: RuntimeView, reason: str = "stop") -> list[HookFailure]:
        return _failures(await self.call("toolang_shutdown", runtime=runtime, reason=reason))

    def leave_out_inactive(self, runtime: RuntimeView) -> Callable[[], None]:
        """Ask every plugin which of its hooks have nothing to do in ``runtime``'s run
        (``toolang_inactive_hooks``) and call none of those until the returned undo is
        called (the runtime does when it stops serving).

        A name that is not a hook the plugin implements, or one of :data:`ALWAYS_CALLED`,
        is logged and ignored; so is an answer that is no collection of names."""
        pm = self._host.pm
        pm.set_inactive(())  # a previous run's answers do not decide what is asked now
        pairs: list[tuple[str, str]] = []
        for plugin, names in self.call("toolang_inactive_hooks", runtime=runtime).answers:
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
                    log.warning("hook.inactive_ignored", plugin=plugin, hook=name, error=problem)
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

    # registration (called plugin by plugin: the host settles each plugin's contributions)

    def registration(
        self, hook: str, plugin: str, /, **kwargs: Any
    ) -> tuple[list[Any], HookFailure | None]:
        """Call ``plugin``'s implementation of registration ``hook`` (``toolang_register_*``,
        ``toolang_agent_sources``); ``(its answers, its failure or None)`` — nothing
        when it does not implement the hook. An async implementation is a failure."""
        done = self.call_with(hook, Terms(only=plugin), **kwargs)
        return (done[0][1], done[0][2]) if done else ([], None)

    def register_routes(self) -> tuple[list[RouteRegistration], list[HookFailure]]:
        """Every plugin's HTTP routes (``toolang_register_routes``) and the plugins whose
        registration failed; see :func:`toolang_core.plugins.routes.collect_routes`."""
        from toolang_core.plugins.routes import collect_routes

        return collect_routes(self._host)

    # events, routing, delivery

    async def on_event(self, event: Event, runtime: RuntimeView) -> list[HookFailure]:
        return _failures(await self.call("toolang_on_event", event=event, runtime=runtime))

    def reported_turn_events(self, runtime: RuntimeView) -> frozenset[str]:
        """The kinds of turn events the plugins publish in ``runtime``'s run
        (``toolang_reports_turn_events``); one that raises or answers no tuple, list or
        set is logged and skipped, a kind that is no string is ignored."""
        done = self.call_with("toolang_reports_turn_events", _KINDS, runtime=runtime)
        answers = done.answers
        return frozenset(kind for _, kinds in answers for kind in kinds if isinstance(kind, str))

    def prompt_notes(self, agent: str, thread_id: str, runtime: RuntimeView) -> list[str]:
        """Every plugin's note for the next prompt (a failing plugin is skipped)."""
        notes = self.call("toolang_prompt_notes", agent=agent, thread_id=thread_id, runtime=runtime)
        return [str(note) for _, note in notes.answers if note]

    async def build_agent(
        self, definition: AgentDefinition, request: TurnRequest, runtime: RuntimeView
    ) -> Any:
        """Every ``toolang_build_agent`` plugin in turn, each seeing the agent the earlier
        ones answered (the fold rule); the call's record (``arguments["definition"]``,
        ``answers``, ``refused``). Checked by :func:`toolang_core.agents.build.build_agent`."""
        # Answers must be definitions too (the type read off the argument: this package
        # sits below the agents package and does not import it).
        terms = Terms(types=(type(definition),), replaces="definition")
        return await self.call_with(
            "toolang_build_agent", terms, definition=definition, request=request, runtime=runtime
        )

    async def route(
        self, request: str, agents: Sequence[AgentDefinition]
    ) -> tuple[RouteProposal | None, tuple[HookFailure, ...]]:
        """Ask every router; the highest score wins (a tie: the router asked first).

        A proposal naming an agent not among ``agents`` is ignored; a router that
        raises is skipped and reported."""
        names: set[str] = set()  # made for the first proposal: most requests get none

        def known(proposal: RouteProposal) -> bool:
            if not names:
                names.update(agent.name for agent in agents)
            return proposal.agent in names

        terms = Terms(accept=known)
        done = await self.call_with("toolang_route", terms, request=request, agents=agents)
        if done.decided is None:
            return None, tuple(done.failures)
        router, proposal = done.decided
        return attrs.evolve(proposal, router=router), tuple(done.failures)

    async def deliver_turn(
        self, turn: TurnRequest, runtime: RuntimeView
    ) -> list[tuple[str, HookFailure | None]]:
        done = await self.call("toolang_deliver_turn", turn=turn, runtime=runtime)
        return [(plugin, failure) for _, plugin, failure in done]

    # observability

    def observes_turns(self) -> bool:
        """Whether any plugin implements the turn hooks (asked once per run, so a
        runtime nobody watches pays nothing on its turns' path)."""
        return any(self.implemented(hook) for hook in _TURN_HOOKS)

    def turn_started(self, turn: TurnRequest, runtime: RuntimeView) -> None:
        self.call("toolang_turn_started", turn=turn, runtime=runtime)

    def turn_step(self, step: StepRecord, runtime: RuntimeView) -> None:
        self.call("toolang_turn_step", step=step, runtime=runtime)

    def turn_finished(
        self, turn: TurnRequest, stages: Sequence[StageDone], runtime: RuntimeView
    ) -> None:
        self.call("toolang_turn_finished", turn=turn, stages=stages, runtime=runtime)

    def outbound_headers(self, turn: TurnRequest, key: str, runtime: RuntimeView) -> dict[str, str]:
        """Every plugin's ``toolang_outbound_headers`` merged in call order (a later
        header replaces an earlier one); a plugin that raises or answers no mapping is
        logged and skipped."""
        done = self.call("toolang_outbound_headers", turn=turn, key=key, runtime=runtime)
        return {str(name): str(value) for name, value in done.merged.items()}

    def doctor_checks(self, runtime: RuntimeView) -> list[tuple[str, Any]]:
        """Every plugin's ``toolang_doctor_checks`` findings as ``(plugin, findings)``;
        a plugin that raised gives a :class:`RuntimeError` saying why in place of them."""
        done = self.call("toolang_doctor_checks", runtime=runtime)
        found: list[tuple[str, Any]] = [(plugin, list(value)) for plugin, value in done.answers]
        return found + [(f.plugin, RuntimeError(f.error)) for f in done.failures]

    # the agent pool (and teams, through it)

    def agent_pool(self, runtime: RuntimeView, records: Any, hooks: Any) -> Any:
        """The first ``toolang_agent_pool`` answer: the pool over ``records`` (``None``:
        no plugin provides one).

        :raises ToolangError: naming the plugin whose provider raised (the rule refuses).
        """
        done = self.call("toolang_agent_pool", runtime=runtime, records=records, hooks=hooks)
        if done.refused is not None:
            raise ToolangError(
                f"plugin {done.refused.plugin!r} failed to provide the agent pool "
                f"(toolang_agent_pool): {done.refused.error}"
            )
        return None if done.decided is None else done.decided[1]

    def score_agent(self, member: Any, capability: str) -> float | None:
        """The first score a ``toolang_score_agent`` plugin gives ``member`` for
        ``capability`` (``None``: the pool's own score); one that raises is skipped."""
        done = self.call("toolang_score_agent", member=member, capability=capability)
        return None if done.decided is None else float(done.decided[1])

    def ping_agents(self, agents: Sequence[Any], runtime: RuntimeView) -> dict[str, Any]:
        """Every ``toolang_ping_agents`` answer merged by agent name (a later plugin's
        answer for an agent replaces an earlier one); one that raises is skipped."""
        return self.call("toolang_ping_agents", agents=agents, runtime=runtime).merged  # type: ignore[no-any-return]

    def agree_payment(self, team_id: str, terms: Any) -> None:
        """Tell every ``toolang_agree_payment`` plugin of a team member's payment terms,
        each isolated."""
        self.call("toolang_agree_payment", team_id=team_id, terms=terms)

    # HTTP routes

    def route_servers(self, runtime: RuntimeView) -> list[tuple[str, str]]:
        """``(plugin, base URL)`` of every plugin that serves the registered routes in
        ``runtime``'s run (``toolang_serves_routes``), in call order; one that raises is
        logged and skipped, an answer that is no non-empty string is ignored."""
        done = self.call("toolang_serves_routes", runtime=runtime)
        return [(plugin, url) for plugin, url in done.answers if isinstance(url, str) and url]

    # task runs

    async def finalize_task_run(
        self, run: TaskRun, runtime: RuntimeView, *, timeout_seconds: float = 60.0
    ) -> tuple[dict[str, str], list[HookFailure]]:
        """Every finalizer's metadata merged in call order (trimmed, empty keys dropped);
        one that raises, answers no mapping or overruns ``timeout_seconds`` adds
        nothing."""
        terms = Terms(timeout=timeout_seconds)
        done = await self.call_with("toolang_finalize_task_run", terms, run=run, runtime=runtime)
        trimmed = {str(key).strip(): str(item).strip() for key, item in done.merged.items()}
        return {key: item for key, item in trimmed.items() if key}, list(done.failures)

    async def observe_task_run(self, run: TaskRun, runtime: RuntimeView) -> list[HookFailure]:
        return _failures(await self.call("toolang_observe_task_run", run=run, runtime=runtime))


_KINDS: Final = Terms(types=(tuple, list, set, frozenset))
"""The answers ``toolang_reports_turn_events`` may give (a string is no collection of
kinds)."""
_TURN_HOOKS: Final = ("toolang_turn_started", "toolang_turn_step", "toolang_turn_finished")


def _failures(outcomes: list[tuple[str, str, HookFailure | None]]) -> list[HookFailure]:
    return [failure for _, _, failure in outcomes if failure is not None]
