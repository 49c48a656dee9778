"""The agent executor: one turn of an agent, from prompt to outcome.

    resolve agent, model, tools → build the prompt → the agent loop
    (:mod:`toolang_core.turn.loop`): take steered input → model call → tool calls
    through the chain → … until a visible answer or a limit.

Each model call and each tool call is stored as a step under an idempotency key
(``<turn>:model:<n>``, ``<turn>:tool:<call id>``). A turn resumed after a crash replays
those steps instead of calling the model or running the tool again. A tool call's intent
is durable before its tool runs, and the steps before it (prompt build, memory recall,
the model call that asked for it) are stored in the same transaction; the steps after a
turn's last tool call are stored with its terminal state. A crash in between makes the
resumed turn redo a model call, never run a tool twice unnoticed.

Completion contract: a turn ends with a visible answer, or fails with a structured
outcome — ``loop_detected`` (the same tool calls requested ``loop_repeats`` times,
whatever their ids), ``empty_after_tool_use``, ``empty_answer``, ``max_steps``,
``timeout``, ``model_error``, ``agent_error`` or ``invalid_output`` (a typed answer that
never matched its schema: :mod:`toolang_core.turn.output`). Limits (steps, delegation rounds,
spawn depth) are enforced in code, never only in the prompt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import structlog

from toolang_core.agents import build
from toolang_core.agents.catalog import AgentError
from toolang_core.agents.partition import PatternError, ToolScopeError
from toolang_core.agents.routing import RouteProposal
from toolang_core.agents.types import AgentDefinition
from toolang_core.attachments import (
    REFUSED,
    Attachment,
    AttachmentError,
    AttachmentStore,
    attachment_refs,
    attachment_refusal,
)
from toolang_core.config.model import DEFAULT_HISTORY_TURNS
from toolang_core.execution.seam import AfterTurn, TurnContext, TurnOutcome
from toolang_core.models.resolve import ModelResolver
from toolang_core.models.types import NO_HEADERS, Message, ModelError, ToolSpec
from toolang_core.plugins.live_map import LiveMap
from toolang_core.store.types import TurnStatus
from toolang_core.taskruns import view
from toolang_core.tools.chain import ToolChain
from toolang_core.tools.types import ToolCallContext
from toolang_core.turn import escalation, output, prompt
from toolang_core.turn.attachments import fallbacks_taking
from toolang_core.turn.compaction import Compactor, check_summary_model
from toolang_core.turn.context import fit_prompt
from toolang_core.turn.loop import AgentLoop, Speaker, TurnFailed
from toolang_core.turn.memory import exchange_batch, recall_for_turn
from toolang_core.turn.model_retry import Candidate, check_fallbacks, fallback_specs
from toolang_core.turn.person_wait import PersonWaits
from toolang_core.turn.replay import REPLAY_META, BadReplay, model_of
from toolang_core.turn.running import (
    DelegationError,
    ResponseMode,
    RunningTurn,
    SpecialistFailed,
)
from toolang_core.turn.tokens import TokenCounter
from toolang_core.turn.usage import SpendLimits, TurnSpend

if TYPE_CHECKING:
    from toolang_core.config.model import AgentsConfig
    from toolang_core.runtime_parts import CoreRuntime
    from toolang_core.store.types import TurnRequest

__all__ = ["AgentExecutor", "DelegationError", "TurnFailed"]

SpeakerKey = tuple[str, tuple[str, ...] | None, bool, str | None]
MAX_SPEAKERS = 256
"""Speakers kept (an agent and a spawn-time narrowing each); past it they are built anew."""

log = structlog.get_logger("toolang.turn")


class AgentExecutor(PersonWaits):
    """Runs agent turns for one runtime (``[runtime] executor = "agent"``)."""

    def __init__(self, runtime: CoreRuntime) -> None:
        self.runtime = runtime
        self.models = ModelResolver(runtime)
        # The agent's own time limit per running turn; waiting for a person pauses it.
        self._deadlines: dict[str, asyncio.Timeout] = {}
        tools = runtime.config.tools
        self.chain = ToolChain(
            runtime.hooks,
            runtime.components.tools,
            timeout_seconds=tools.timeout_seconds,
            max_output_chars=tools.max_output_chars,
            withheld=runtime.components.withheld_tools,
            redaction=runtime.redaction,
            threads=runtime.tool_threads,
        )
        self.output_checker = output.OutputChecker(self.chain.validator)
        # Asked once: with no plugin adding headers, a model call pays nothing for them.
        self._asks_headers = bool(runtime.hooks.implementations("toolang_outbound_headers"))
        self._builds = bool(runtime.hooks.implementations(build.HOOK))
        # Speakers built once per agent and narrowing, for as long as the catalog keeps
        # its tool assignment and the registry its definition (a reload builds anew).
        self._speakers: dict[SpeakerKey, tuple[object, AgentDefinition, Speaker]] = {}
        self._offers = escalation.Offers(MAX_SPEAKERS)

    # -- what a turn runs with ----------------------------------------------------------

    def outbound_headers(self, turn: TurnRequest, key: str) -> Mapping[str, str]:
        """The headers plugins add to the model call ``key`` of ``turn``
        (``toolang_outbound_headers``; none when no plugin implements it)."""
        if not self._asks_headers:
            return NO_HEADERS
        return self.runtime.hooks.outbound_headers(turn, key, self.runtime)

    async def prepare(self) -> None:
        """Read the agent registry before the first turn; log tools no agent owns; check
        the fallback and summary models. :raises ConfigError: for one no provider has."""
        await asyncio.to_thread(self.runtime.agents.report_unmatched)
        check_fallbacks(self.models, self.runtime.config.models, self.runtime.agents)
        check_summary_model(self.models, self.runtime.config.agents)

    def agent(self, name: str | None) -> AgentDefinition:
        """The named agent (``None``: ``[agents] default``). :raises TurnFailed:"""
        try:
            return self.runtime.agents.agent(name)
        except AgentError as exc:
            raise TurnFailed(str(exc), "agent_error") from None

    async def _agent_for(
        self, turn: TurnRequest
    ) -> tuple[AgentDefinition, list[str] | None, tuple[str, ...], frozenset[str] | None]:
        """The agent ``turn`` runs with, the names its tools are narrowed to (``None``:
        its whole scope), the plugins that built it (``toolang_build_agent``) and the
        tools they narrowed it to (``None``: not narrowed).

        :raises TurnFailed: for an unknown agent, a bad narrowing, or a build plugin
            that fails or answers outside the registry's limits."""
        agent, allowed = self.agent(turn.agent), _allowed_tools(turn.meta)
        if not self._builds:
            return agent, allowed, (), None
        agents, limits = self.runtime.agents, self.runtime.config.agents
        defaults = {
            "max_steps": limits.max_steps,
            "max_delegation_rounds": limits.max_delegation_rounds,
            "context_tokens": limits.context_tokens,
        }
        try:
            made = await build.build_agent(
                self.runtime.hooks, agent, turn, self.runtime, scope=agents.scope, defaults=defaults
            )
            if made.narrowed is None:
                return made.agent, allowed, made.changed_by, None
            names = made.narrowed & agents.scope(agent, allowed)
        except build.AgentBuildError as exc:
            raise TurnFailed(str(exc), "agent_error") from None
        except (ToolScopeError, PatternError) as exc:
            raise TurnFailed(str(exc), "agent_error") from None
        return made.agent, sorted(names), made.changed_by, made.narrowed

    def _escalating(
        self, speaker: Speaker, meta: Mapping[str, Any], built: frozenset[str] | None
    ) -> tuple[Speaker, escalation.Escalation]:
        """What the turn's agent may ask for with ``request_tool`` (its ceiling), and
        ``speaker`` offered that tool when there is something to ask for."""
        agents = self.runtime.agents
        return self._offers.of(
            speaker,
            meta,
            built,
            assignment=agents.assignment,
            scope=lambda: agents.scope(speaker.agent),
            registered=self.runtime.components.tools,
        )

    def tools_for(
        self, agent: AgentDefinition, allowed_tools: Iterable[str] | None = None
    ) -> tuple[tuple[ToolSpec, ...], frozenset[str]]:
        """The tools ``agent`` may use — its scope from the tool assignment, narrowed by
        spawn-time ``allowed_tools`` — as ``(specs for the model, allowed names)``.

        :raises TurnFailed: when ``allowed_tools`` reaches outside the agent's scope.
        """
        registered = self.runtime.components.tools
        try:
            allowed = self.runtime.agents.scope(agent, allowed_tools)
        except (ToolScopeError, PatternError) as exc:
            raise TurnFailed(str(exc), "agent_error") from None
        # one snapshot: a tool withdrawn since the scope was worked out is not offered
        current = registered.current if isinstance(registered, LiveMap) else registered
        specs = tuple(
            ToolSpec(n, current[n].tool.description, current[n].tool.parameters)
            for n in sorted(allowed)
            if n in current
        )
        return specs, allowed

    # -- the turn -----------------------------------------------------------------------

    async def execute(self, ctx: TurnContext) -> TurnOutcome:
        limit = self.runtime.config.agents.turn_timeout_seconds
        try:
            async with asyncio.timeout(limit) as deadline:
                self._deadlines[ctx.turn.id] = deadline
                return await self._turn(ctx)
        except TimeoutError:
            return TurnOutcome.failed(
                f"the agent did not finish within {limit:g} s (time spent waiting for "
                "approvals not counted)",
                outcome="timeout",
            )
        except TurnFailed as exc:
            return TurnOutcome.failed(str(exc), outcome=exc.outcome)
        finally:
            self._deadlines.pop(ctx.turn.id, None)

    async def _turn(self, ctx: TurnContext) -> TurnOutcome:
        turn = ctx.turn
        config = self.runtime.config
        if view.is_task_run(turn):
            await self.runtime.task_runs.started(turn)
        agent, allowed, built_by, built_tools = await self._agent_for(turn)
        speaker, escalating = self._escalating(
            self.speaker_for(agent, allowed, model=_model(turn.meta)), turn.meta, built_tools
        )
        notes = self.runtime.hooks.prompt_notes(agent.name, turn.thread_id, self.runtime)
        route = None
        if agent.name == config.agents.default:  # the default agent is the router
            route = await self.runtime.agents.route(turn.input, agent.name)
            if route is not None:
                notes = [*notes, _route_note(route, self.runtime.agents.agent(route.agent))]
        # refused before any model call; the fallbacks that cannot take them are skipped
        speaker, attached, skipped = _fallbacks_for(ctx, speaker, self._attachments(ctx, speaker))
        typed = output.spec_for(turn, agent, config.agents.output_retries)
        if typed is not None:
            notes = [*notes, output.schema_note(typed.schema)]
        memory = self.runtime.memory
        recalled = await recall_for_turn(ctx, memory, agent)
        user = Message(role="user", content=turn.input, attachments=attached)
        budget = agent.context_tokens or config.agents.context_tokens
        fitted = None
        # One count of the turn's spend, from before its prompt is built: a summarising
        # call of a compaction counts against the turn's limits like its other calls.
        spend = TurnSpend(
            SpendLimits.for_turn(config.limits, turn), turn=turn, store=ctx.store, clock=ctx.clock
        )
        if budget is None:
            kept = config.agents.history_turns
            messages = [
                prompt.system_message(agent, turn, notes=notes, memory=recalled.lines),
                *prompt.history(ctx.store, turn, DEFAULT_HISTORY_TURNS if kept is None else kept),
                user,
            ]
        else:
            counter = TokenCounter(speaker.model)
            fitted = await fit_prompt(
                ctx,
                budget=budget,
                max_turns=config.agents.history_turns,
                counter=counter,
                system=lambda summary: prompt.system_message(
                    agent, turn, notes=notes, memory=recalled.lines, summary=summary
                ),
                user=user,
                compactor=self._compactor(ctx, speaker, counter, spend),
            )
            messages = [fitted.system, *fitted.history, user]
        built: dict[str, Any] = {
            "agent": agent.name,
            "model": speaker.model_name,
            "tools": [s.name for s in speaker.specs],
            "history_messages": len(messages) - 2,
            "notes": list(notes),
            "memory": recalled.summary
            if recalled.summary is not None
            else {k: v for k, v in recalled.trace.items() if k != "rendered"},
            "memory_lines": len(recalled.lines),
            "degraded": recalled.degraded,
            "route": route.to_json() if route is not None else None,
            **({"built_by": list(built_by)} if built_by else {}),
        }
        if fitted is not None:
            built["context"] = fitted.trace
        if attached:
            built["attachments"] = [a.ref.to_json() for a in attached]
        if skipped:
            built["fallbacks_skipped"] = skipped
        degraded = recalled.degraded or (fitted is not None and fitted.degraded)
        built_step = ctx.defer_step("prompt_build", data=built)
        handle = RunningTurn(self, ctx, max_rounds=_max_rounds(agent, config.agents), spend=spend)
        loop = AgentLoop(
            self,
            ctx,
            handle,
            speaker,
            messages,
            key_prefix=turn.id,
            spawn_depth=int(turn.meta.get("spawn_depth", 0)),
            max_steps=agent.max_steps or config.agents.max_steps,
            typed=typed,
            escalating=escalating,
        )
        end = await loop.run()
        outcome = end.outcome
        answer = outcome.output if outcome.status is TurnStatus.COMPLETED else None
        last = end.speaker.agent
        # A replay leaves nothing behind but its own turn: no memory of what it said.
        batch = (
            exchange_batch(memory, ctx, last, answer)
            if answer is not None and REPLAY_META not in turn.meta
            else None
        )
        # The trace is the prompt-build step as stored (masked already) and two values
        # of the runtime's own: it is not walked by the redaction policy again.
        trace_data = {**built_step.data, "model_calls": end.model_calls}
        if last.name != agent.name:
            trace_data["answered_by"] = last.name
        if degraded and outcome.status is TurnStatus.COMPLETED:
            outcome = attrs.evolve(outcome, outcome="degraded")
        return outcome.with_parts(
            after=AfterTurn(prompt_trace=trace_data, memory=batch, trace_masked=True)
        )

    def _compactor(
        self, ctx: TurnContext, speaker: Speaker, counter: TokenCounter, spend: TurnSpend
    ) -> Compactor:
        """Who writes a thread's summary for ``speaker``'s turns: ``[agents]
        summary_model``, else the agent's model and its fallbacks (the summary is
        measured with ``counter``, the agent model's: it goes into that model's prompt).
        Its calls count in ``spend``, with those an earlier attempt of the turn made.

        :raises TurnFailed: for a summary model that cannot be resolved.
        """
        config = self.runtime.config
        spec = config.agents.summary_model
        if spec is None:
            candidates = (Candidate(speaker.model_name, speaker.model), *speaker.fallbacks)
        else:
            try:
                model = self.models.resolve(spec, wanted_by="[agents] summary_model")
            except ModelError as exc:
                raise TurnFailed(str(exc), "model_error") from None
            candidates = (Candidate(spec, model),)
        if ctx.attempt > 1:  # an earlier attempt's summarising calls were spent too
            for step in ctx.store.steps(ctx.turn.id):
                if step.kind == "compaction" and step.status == "completed":
                    spend.add(step.data.get("tokens") or {})
        return Compactor(
            candidates=candidates,
            retry=config.models.retry,
            mask=self.runtime.redaction.text,
            counter=counter,
            agent=speaker.agent.name,
            spend=spend,
        )

    def _attachments(self, ctx: TurnContext, speaker: Speaker) -> tuple[Attachment, ...]:
        """The attachments the turn's request references, with their files: each must
        be the request owner's, and of a type the speaker's model accepts.

        :raises TurnFailed: outcome ``attachment_refused`` (the model takes no such
            type) or ``attachment_error`` (a reference that is not one, not the
            owner's, or whose bytes are gone)."""
        try:
            refs = attachment_refs(ctx.turn.meta)
            if not refs:
                return ()
            refused = attachment_refusal(speaker.model, speaker.model_name, refs)
            if refused is not None:
                raise TurnFailed(refused, REFUSED)
            store = AttachmentStore.of(self.runtime.config, ctx.store)
            return tuple(store.attachment(ref, owner=ctx.turn.owner) for ref in refs)
        except AttachmentError as exc:
            raise TurnFailed(str(exc), "attachment_error") from None

    def speaker_for(
        self,
        agent: AgentDefinition,
        allowed_tools: Iterable[str] | None = None,
        *,
        lenient: bool = False,
        model: str | None = None,
    ) -> Speaker:
        """``agent`` with its model (or ``model``) and tools (narrowed by
        ``allowed_tools``; with ``lenient`` names outside the scope are dropped instead
        of refused).

        :raises TurnFailed: for a model that cannot be resolved or a bad narrowing.
        """
        narrowed = None if allowed_tools is None else tuple(allowed_tools)
        assignment = self.runtime.agents.assignment
        key = (agent.name, narrowed, lenient, model)
        known = self._speakers.get(key)
        if known is not None and known[0] is assignment and known[1] is agent:
            return known[2]
        speaker = self._new_speaker(agent, narrowed, lenient=lenient, model=model)
        if len(self._speakers) >= MAX_SPEAKERS:
            self._speakers.clear()
        self._speakers[key] = (assignment, agent, speaker)
        return speaker

    def _new_speaker(
        self,
        agent: AgentDefinition,
        allowed_tools: Iterable[str] | None,
        *,
        lenient: bool,
        model: str | None = None,
    ) -> Speaker:
        model_name = model or agent.model or self.runtime.config.models.default
        asked_by = f"agent {agent.name!r}" if model is None else "the request's meta.model"
        try:
            resolved = self.models.resolve(model_name, wanted_by=asked_by)
            # A model the request names is the one it is to be answered by: no fallback.
            fallbacks = tuple(
                Candidate(spec, self.models.resolve(spec, wanted_by=wanted))
                for spec, wanted in fallback_specs(self.runtime.config.models, agent)
                if spec != model_name and model is None
            )
        except ModelError as exc:
            raise TurnFailed(str(exc), "model_error") from None
        if lenient and allowed_tools is not None:
            scope = self.runtime.agents.scope(agent)
            allowed_tools = [t for t in allowed_tools if t in scope]
        specs, allowed = self.tools_for(agent, allowed_tools)
        return Speaker(agent, resolved, model_name, specs, allowed, fallbacks)

    async def ask_agent(
        self,
        ctx: TurnContext,
        *,
        handle: RunningTurn,
        call: ToolCallContext,
        name: str,
        request: str,
        mode: ResponseMode,
    ) -> str:
        """Agent-as-tool: ``name`` answers ``request`` inside the turn, one level deeper
        than ``call``, with its own instruction and tools and none of the turn's history.

        :raises DelegationError: when the agent cannot be used or does not answer.
        """
        try:
            agent = self.runtime.agents.delegate(name)
            if agent.name == call.agent:
                raise DelegationError(f"agent {name!r} cannot ask itself")
            speaker = self.speaker_for(agent)
        except (TurnFailed, AgentError) as exc:
            raise DelegationError(str(exc)) from None
        note = f"Agent {call.agent!r} asks you this; your answer goes back to it."
        loop = AgentLoop(
            self,
            ctx,
            handle,
            speaker,
            [
                prompt.system_message(agent, ctx.turn, notes=[note]),
                Message(role="user", content=request),
            ],
            key_prefix=f"{ctx.turn.id}:ask:{call.call_id}",
            spawn_depth=call.spawn_depth + 1,
            max_steps=agent.max_steps or self.runtime.config.agents.max_steps,
            call_prefix=f"{call.call_id}/",
            steerable=False,
        )
        try:
            end = await loop.run()
        except TurnFailed as exc:
            raise SpecialistFailed(f"agent error: {exc}") from None
        if end.outcome.status is not TurnStatus.COMPLETED:
            raise SpecialistFailed(f"agent error: {end.outcome.error}")
        if mode == "final_only":
            return end.answers[-1]
        return "\n\n".join(end.answers)


def _max_rounds(agent: AgentDefinition, config: AgentsConfig) -> int:
    if agent.max_delegation_rounds is not None:
        return agent.max_delegation_rounds
    return config.max_delegation_rounds


def _model(meta: Mapping[str, Any]) -> str | None:
    """The model a request names for its turn (a fork's or a replay's), else ``None``."""
    try:
        return model_of(meta)
    except BadReplay as exc:
        raise TurnFailed(str(exc), "agent_error") from None


def _allowed_tools(meta: Mapping[str, Any]) -> list[str] | None:
    """A delegated request's spawn-time ``allowed_tools`` (``None``: the whole scope)."""
    value = meta.get("allowed_tools")
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise TurnFailed(
            f"meta.allowed_tools must be a list of tool names, got {value!r}", "agent_error"
        )
    return [str(v) for v in value]


def _fallbacks_for(
    ctx: TurnContext, speaker: Speaker, attached: tuple[Attachment, ...]
) -> tuple[Speaker, tuple[Attachment, ...], list[str]]:
    """``speaker`` with only the fallback models that take ``attached``, ``attached``,
    and why each other fallback is skipped (logged; the ``prompt_build`` step says it)."""
    if not attached or not speaker.fallbacks:
        return speaker, attached, []
    usable, skipped = fallbacks_taking(speaker.fallbacks, [a.ref for a in attached])
    for reason in skipped:
        log.warning("fallback_skipped", turn_id=ctx.turn.id, reason=reason)
    return attrs.evolve(speaker, fallbacks=usable), attached, skipped


def _route_note(route: RouteProposal, agent: AgentDefinition) -> str:
    """What the router's prompt says about the proposal (delegation acts on it)."""
    role = f": {agent.description}" if agent.description else ""
    return (
        f"Routing: this request fits agent {route.agent!r}{role} ({route.reason}). "
        "Answer simple messages yourself."
    )
