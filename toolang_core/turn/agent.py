"""The agent executor: one turn of an agent, from prompt to outcome.

    resolve agent, model, tools → build the prompt → loop:
        take steered input → model call → tool calls through the chain → …
    until a visible answer or a limit.

Each model call and each tool call is stored as a step the moment it finishes, under an
idempotency key (``<turn>:model:<n>``, ``<turn>:tool:<call id>``). A turn resumed after a
crash replays those steps instead of calling the model or running the tool again.

Completion contract: a turn ends with a visible answer, or fails with a structured
outcome — ``loop_detected`` (the same tool calls requested ``loop_repeats`` times,
whatever their ids), ``empty_after_tool_use``, ``empty_answer``, ``max_steps``,
``timeout``, ``model_error`` or ``agent_error``. Limits are enforced here, in code.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import structlog

from toolang_core.agents.catalog import AgentError
from toolang_core.agents.partition import PatternError, ToolScopeError
from toolang_core.agents.routing import RouteProposal
from toolang_core.agents.types import AgentDefinition
from toolang_core.models.resolve import ModelResolver
from toolang_core.models.types import Message, ModelError, ModelRequest, ModelResponse, ToolSpec
from toolang_core.plugins.host import describe_exception
from toolang_core.redaction import redact
from toolang_core.runtime.after_turn import AfterTurn
from toolang_core.runtime.executor import TurnContext, TurnOutcome
from toolang_core.store.types import TurnStatus
from toolang_core.tools.approvals import ApprovalBook, canonical_params
from toolang_core.tools.chain import ToolChain
from toolang_core.tools.types import Denied, Granted, Pending, ToolCall, ToolCallContext, ToolResult
from toolang_core.turn import prompt, trace
from toolang_core.turn.memory import exchange_batch, recall_for_turn

if TYPE_CHECKING:
    from toolang_core.runtime.runtime import Runtime

log = structlog.get_logger("toolang.turn")


class TurnFailed(Exception):
    """The turn cannot go on; ``outcome`` says why (it ends ``failed``)."""

    def __init__(self, message: str, outcome: str) -> None:
        super().__init__(message)
        self.outcome = outcome


class AgentExecutor:
    """Runs agent turns for one runtime (``[runtime] executor = "agent"``)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.models = ModelResolver(runtime)
        # The agent's own time limit per running turn; waiting for a person pauses it.
        self._deadlines: dict[str, asyncio.Timeout] = {}
        tools = runtime.config.tools
        self.chain = ToolChain(
            runtime.host.hooks,
            runtime.host.components.tools,
            timeout_seconds=tools.timeout_seconds,
            max_output_chars=tools.max_output_chars,
        )

    # -- what a turn runs with ----------------------------------------------------------

    async def prepare(self) -> None:
        """Read the agent registry before the first turn; log tools no agent owns."""
        await asyncio.to_thread(self.runtime.agents.report_unmatched)

    def agent(self, name: str | None) -> AgentDefinition:
        """The named agent (``None``: ``[agents] default``). :raises TurnFailed:"""
        try:
            return self.runtime.agents.agent(name)
        except AgentError as exc:
            raise TurnFailed(str(exc), "agent_error") from None

    def tools_for(
        self, agent: AgentDefinition, allowed_tools: Iterable[str] | None = None
    ) -> tuple[tuple[ToolSpec, ...], frozenset[str]]:
        """The tools ``agent`` may use — its scope from the tool assignment, narrowed by
        spawn-time ``allowed_tools`` — as ``(specs for the model, allowed names)``.

        :raises TurnFailed: when ``allowed_tools`` reaches outside the agent's scope.
        """
        registered = self.runtime.host.components.tools
        try:
            allowed = self.runtime.agents.scope(agent, allowed_tools)
        except (ToolScopeError, PatternError) as exc:
            raise TurnFailed(str(exc), "agent_error") from None
        specs = tuple(
            ToolSpec(n, registered[n].tool.description, registered[n].tool.parameters)
            for n in sorted(allowed)
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
        agent = self.agent(turn.agent)
        model_name = agent.model or config.models.default
        try:
            model = self.models.resolve(model_name, wanted_by=f"agent {agent.name!r}")
        except ModelError as exc:
            raise TurnFailed(str(exc), "model_error") from None
        specs, allowed = self.tools_for(agent, _allowed_tools(turn.meta))
        notes = self.runtime.host.hooks.prompt_notes(agent.name, turn.thread_id, self.runtime)
        route = None
        if agent.name == config.agents.default:  # the default agent is the router
            route = await self.runtime.agents.route(turn.input, agent.name)
            if route is not None:
                notes = [*notes, _route_note(route, self.runtime.agents.agent(route.agent))]
        memory = self.runtime.memory
        recalled = await recall_for_turn(ctx, memory, agent)
        messages = [
            prompt.system_message(agent, turn, notes=notes, memory=recalled.lines),
            *prompt.history(ctx.store, turn, config.agents.history_turns),
            Message(role="user", content=turn.input),
        ]
        built = {
            "agent": agent.name,
            "model": model_name,
            "tools": [s.name for s in specs],
            "history_messages": len(messages) - 2,
            "notes": list(notes),
            "memory": {k: v for k, v in recalled.trace.items() if k != "rendered"},
            "memory_lines": len(recalled.lines),
            "degraded": recalled.degraded,
            "route": route.to_json() if route is not None else None,
        }
        ctx.record_step("prompt_build", data=built)

        def ended(outcome: TurnOutcome, answer: str | None = None) -> TurnOutcome:
            batch = exchange_batch(memory, ctx, agent, answer) if answer is not None else None
            after = AfterTurn(prompt_trace=built | {"model_calls": step + 1}, memory=batch)
            if recalled.degraded and outcome.status is TurnStatus.COMPLETED:
                outcome = attrs.evolve(outcome, outcome="degraded")
            return attrs.evolve(outcome, after=after)

        seen: Counter[tuple[tuple[str, str], ...]] = Counter()
        used_tools = False
        model_id = model_name.partition("/")[2] or None
        step = 0
        max_steps = agent.max_steps or config.agents.max_steps
        for step in range(max_steps):
            for steered in ctx.take_steer():
                messages.append(Message(role="user", content=steered.input))
            response = await self._model_call(
                ctx,
                model=model,
                model_name=model_name,
                model_id=model_id,
                messages=messages,
                specs=specs,
                step=step,
            )
            calls = _with_ids(response.tool_calls, step)
            if calls:
                used_tools = True
                signature = tuple(sorted((c.name, canonical_params(c.params)) for c in calls))
                seen[signature] += 1
                if seen[signature] >= config.agents.loop_repeats:
                    names = ", ".join(c.name for c in calls)
                    return ended(
                        TurnOutcome.failed(
                            f"the model asked for the same tool call(s) ({names}) "
                            f"{seen[signature]} times; stopped",
                            outcome="loop_detected",
                        )
                    )
                # The history keeps each call as it ran: a security filter's changes
                # (e.g. masked personal data) reach the next prompt and its trace.
                ran, replies = [], []
                for call in calls:
                    as_run, result = await self._tool_call(ctx, agent, call, allowed)
                    ran.append(as_run)
                    replies.append(prompt.tool_message(call.call_id, call.name, result))
                messages.append(
                    Message(role="assistant", content=response.text, tool_calls=tuple(ran))
                )
                messages.extend(replies)
                continue
            if response.text.strip():
                return ended(TurnOutcome.completed(response.text), answer=response.text)
            if used_tools:
                return ended(
                    TurnOutcome.failed(
                        "the agent used tools but gave no visible answer",
                        outcome="empty_after_tool_use",
                    )
                )
            return ended(
                TurnOutcome.failed("the model gave an empty answer", outcome="empty_answer")
            )
        return ended(
            TurnOutcome.failed(
                f"no final answer after {max_steps} model calls",
                outcome="max_steps",
            )
        )

    async def _model_call(
        self,
        ctx: TurnContext,
        *,
        model: Any,
        model_name: str,
        model_id: str | None,
        messages: list[Message],
        specs: tuple[ToolSpec, ...],
        step: int,
    ) -> ModelResponse:
        key = f"{ctx.turn.id}:model:{step}"
        done = ctx.find_step(key)
        if done is not None and done.status == "completed":
            return trace.response_from_json(dict(done.data["response"]))
        started = ctx.clock()
        request_json, truncated = trace.messages_json(messages)
        try:
            response: ModelResponse = await model.complete(
                ModelRequest(messages=tuple(messages), tools=specs, model_id=model_id)
            )
        except (ModelError, Exception) as exc:
            error = describe_exception(exc)
            ctx.record_step(
                "model_call",
                status="failed",
                error=error,
                started_at=started,
                data={"model": model_name, "messages": request_json, "truncated": truncated},
            )
            raise TurnFailed(f"model {model_name!r} failed: {error}", "model_error") from None
        ctx.record_step(
            "model_call",
            started_at=started,
            idempotency_key=key,
            data={
                "model": model_name,
                "messages": request_json,
                "truncated": truncated,
                "response": trace.response_json(response),
            },
        )
        return response

    async def _tool_call(
        self,
        ctx: TurnContext,
        agent: AgentDefinition,
        call: ToolCall,
        allowed: frozenset[str] | None,
    ) -> tuple[ToolCall, ToolResult]:
        """Run (or replay) one call; return it as it ran and its result."""
        key = f"{ctx.turn.id}:tool:{call.call_id}"
        done = ctx.find_step(key)
        if done is not None:  # ran before this turn was interrupted: never run it twice
            return (
                trace.call_from_json(dict(done.data["call"])),
                trace.result_from_json(dict(done.data["result"])),
            )
        tool_ctx = ToolCallContext(
            call=call,
            turn_id=ctx.turn.id,
            thread_id=ctx.turn.thread_id,
            run_id=ctx.run_id,
            agent=agent.name,
            spawn_depth=int(ctx.turn.meta.get("spawn_depth", 0)),
            allowed_tools=allowed,
            runtime=self.runtime,
        )
        started = ctx.clock()
        chained = await self.chain.run(
            call,
            tool_ctx,
            wait_for_approval=lambda pending, c, _: self._await_approval(ctx, pending, c),
        )
        data: dict[str, Any] = {
            "call": trace.call_json(chained.call),
            "result": trace.result_json(chained.result),
            "chain": [s.to_json() for s in chained.stages],
        }
        if dict(chained.call.params) != dict(call.params):
            # Never the original parameters: a filter changed them to keep them out.
            data["params_modified"] = True
        ctx.record_step(
            "tool_call",
            data=redact(data),
            started_at=started,
            idempotency_key=key,
            status="completed" if chained.result.ok else "failed",
            error=chained.result.error,
        )
        return chained.call, chained.result

    async def _await_approval(
        self, ctx: TurnContext, pending: Pending, call: ToolCall
    ) -> Granted | Denied:
        book = ApprovalBook(ctx.store, clock=ctx.clock)
        approval = book.get(pending.approval_id)
        ctx.set_status(TurnStatus.AWAITING_APPROVAL)
        log.info("turn.awaiting_approval", turn=ctx.turn.id, approval=approval.id, tool=call.name)
        loop = asyncio.get_running_loop()
        deadline = self._deadlines.get(ctx.turn.id)
        due = deadline.when() if deadline is not None else None
        remaining = None if due is None else due - loop.time()
        if deadline is not None:
            deadline.reschedule(None)  # a person's time is not the agent's
        try:
            final = await book.wait(approval)
        finally:
            if deadline is not None and remaining is not None:
                deadline.reschedule(loop.time() + remaining)
            current = ctx.store.get(ctx.turn.id)
            if current is not None and current.status is TurnStatus.AWAITING_APPROVAL:
                ctx.set_status(TurnStatus.RUNNING)
        return book.decision(final)


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


def _route_note(route: RouteProposal, agent: AgentDefinition) -> str:
    """What the router's prompt says about the proposal (delegation acts on it)."""
    role = f": {agent.description}" if agent.description else ""
    return (
        f"Routing: this request fits agent {route.agent!r}{role} ({route.reason}). "
        "Answer simple messages yourself."
    )


def _with_ids(calls: tuple[ToolCall, ...], step: int) -> tuple[ToolCall, ...]:
    """Give every call an id unique in its response (stable across replays)."""
    seen: set[str] = set()
    out = []
    for index, call in enumerate(calls):
        call_id = call.call_id or f"call-{step}-{index}"
        if call_id in seen:
            call_id = f"{call_id}-{index}"
        seen.add(call_id)
        out.append(attrs.evolve(call, call_id=call_id) if call_id != call.call_id else call)
    return tuple(out)
