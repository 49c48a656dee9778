"""What a control tool may do with the turn its call belongs to.

The delegation tools (``ask_agent``, ``start_task_run``, ``agent_spawn``, the waits)
are ordinary tools — every call passes the whole tool-hook chain — but they act on the
running turn: they spawn its children, count its delegation rounds, run a specialist
inside it, and give its scheduler slot back while they wait. The agent executor hands
them a :class:`RunningTurn` as ``ToolCallContext.turn``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol

from toolang_core.tools.turn_handle import ResponseMode
from toolang_core.turn.usage import SpendLimits, TurnSpend

if TYPE_CHECKING:
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.execution.seam import TurnContext
    from toolang_core.runtime_parts import CoreRuntime
    from toolang_core.store.types import TurnRequest
    from toolang_core.tools.types import ToolCallContext
    from toolang_core.turn.speaker import Speaker

__all__ = ["DelegationError", "ResponseMode", "RunningTurn", "SpecialistFailed"]


class TurnExecutorPort(Protocol):
    """What a running turn asks of the agent executor that runs it
    (:class:`~toolang_core.turn.agent.AgentExecutor` is one). Named here, not the
    executor, which imports this module to hand each turn its handle."""

    @property
    def runtime(self) -> CoreRuntime:
        """The runtime the executor runs turns for."""

    def agent(self, name: str | None) -> AgentDefinition:
        """Agent ``name`` (``None``: the default one)."""
        ...

    def speaker_for(
        self,
        agent: AgentDefinition,
        allowed_tools: Iterable[str] | None = None,
        *,
        lenient: bool = False,
    ) -> Speaker:
        """``agent`` with its model and its tools."""
        ...

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
        """Agent-as-tool: ``name`` answers ``request`` inside the turn."""
        ...

    def parked_on_person(self, ctx: TurnContext) -> AbstractAsyncContextManager[None]:
        """While the body waits for a person."""
        ...

    def stopped_for_good(self, ctx: TurnContext) -> str | None:
        """Why the turn will not come back to a wait that was cancelled."""
        ...


class DelegationError(RuntimeError):
    """A delegation tool cannot do what it was asked (its message goes to the model)."""


class SpecialistFailed(DelegationError):
    """The asked agent took the request and failed (after the hand-off, unlike a
    refused one: unknown, idle, itself); the caller is told to reroute."""


class RunningTurn:
    """One agent turn in progress, as its control tools see it (implements
    :class:`~toolang_core.tools.turn_handle.TurnHandle`)."""

    def __init__(
        self,
        executor: TurnExecutorPort,
        ctx: TurnContext,
        *,
        max_rounds: int,
        spend: TurnSpend | None = None,
    ) -> None:
        self._executor = executor
        self._ctx = ctx
        self.max_rounds = max_rounds
        self.rounds = 0
        self.spend = spend or TurnSpend(
            SpendLimits(), turn=ctx.turn, store=ctx.store, clock=ctx.clock
        )
        """What the turn's model calls spent and the limits it is held to
        (:mod:`toolang_core.turn.usage`)."""

    @property
    def request(self) -> TurnRequest:
        """The turn request being executed."""
        return self._ctx.turn

    @property
    def runtime(self) -> CoreRuntime:
        return self._executor.runtime

    @property
    def owner(self) -> str:
        """Whose work this is: the request's owner, else its sender. Task runs spawned
        from this turn belong to them."""
        return self.request.owner or self.request.sender

    def take_round(self) -> bool:
        """Count one delegation round (``ask_agent``, ``transfer_to_agent``); ``False``
        once the turn's limit is used up (the call is then refused)."""
        if self.rounds >= self.max_rounds:
            return False
        self.rounds += 1
        return True

    async def ask(self, call: ToolCallContext, agent: str, request: str, mode: ResponseMode) -> str:
        """Run ``agent`` on ``request`` inside this turn, one level deeper than ``call``,
        and return its answer (every assistant message, or the final one).

        :raises DelegationError: when the agent cannot be used or does not answer.
        """
        return await self._executor.ask_agent(
            self._ctx, handle=self, call=call, name=agent, request=request, mode=mode
        )

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """While the body waits for other turns (its task runs), this turn's slot of
        ``[scheduler] max_running`` is lent to them — a parent waiting on children it
        keeps from running would otherwise wait forever."""
        slot = self._ctx.slot
        if slot is None:
            yield
            return
        with slot.lend(self.request.id):
            yield

    def parked(self) -> AbstractAsyncContextManager[None]:
        """While the body waits for a person (``ask_person``): see
        :meth:`AgentExecutor.parked_on_person
        <toolang_core.turn.agent.AgentExecutor.parked_on_person>`."""
        return self._executor.parked_on_person(self._ctx)

    def stopped_for_good(self) -> str | None:
        """Why the turn will not come back to a wait that was cancelled (``None``: it
        is only handed back and resumes)."""
        return self._executor.stopped_for_good(self._ctx)

    async def complete(self, call: ToolCallContext, instruction: str, text: str) -> str:
        """One answer of the calling agent's own model (``call.agent``, its configured
        model) to ``text`` under ``instruction`` — no tools, no history, no memory — for
        tools that need the agent's model to write something, e.g. the chronicler's
        reflections. The call shows in the trace as the tool call's result.

        :raises DelegationError: when the agent or its model cannot be used or fails.
        """
        from toolang_core.errors import describe_exception
        from toolang_core.models.types import Message, ModelRequest
        from toolang_core.turn.failure import TurnFailed

        try:
            speaker = self._executor.speaker_for(self._executor.agent(call.agent), ())
            response = await speaker.model.complete(
                ModelRequest(
                    messages=(Message("system", instruction), Message("user", text)),
                    model_id=speaker.model_id,
                )
            )
        except TurnFailed as exc:
            raise DelegationError(str(exc)) from None
        except Exception as exc:  # a model failure is the tool's failure, told to the model
            raise DelegationError(
                f"the model of agent {call.agent!r} failed: {describe_exception(exc)}"
            ) from None
        return str(response.text)
