"""What a scheduler's task for one turn does: run the executor, hand the terminal state
in, run the post-turn stages after its commit, and tell the plugins watching turns.

:class:`~toolang_core.runtime.scheduler.Scheduler` admits turns and starts one task per
turn; its loop commits the terminal states those tasks hand in
(:class:`~toolang_core.runtime.commits.TurnCommits`). A canceled task is told apart by
why the scheduler canceled it: handed back at a shutdown, lost to another runtime, or
canceled by a person.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import attrs
import structlog

from toolang_core.errors import describe_exception
from toolang_core.execution.seam import (
    LEASE_LOST,
    SHUTDOWN,
    LeaseLost,
    TurnContext,
    TurnOutcome,
    TurnSlot,
)
from toolang_core.runtime.after_turn import AfterTurnStages, StageDone
from toolang_core.store.types import StepRecord, TurnRequest, TurnStatus

if TYPE_CHECKING:
    from toolang_core.execution.seam import TurnExecutor
    from toolang_core.inbox.inbox import Inbox
    from toolang_core.plugins.facade import Hooks
    from toolang_core.runtime.commits import TurnCommits
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.store.protocol import ExecutionStore

log = structlog.get_logger("toolang.scheduler")


class _Scheduler(TurnSlot, Protocol):
    """What a turn's task uses of its scheduler (the ``self`` of :class:`TurnTasks`):
    the slot it lends the executor, and the state below."""

    store: ExecutionStore
    executor: TurnExecutor
    run_id: str
    max_attempts: int
    clock: Callable[[], float]
    runtime: RuntimeView
    hooks: Hooks
    inbox: Inbox | None
    commits: TurnCommits
    _after: AfterTurnStages
    _observed: bool
    _committed: set[str]
    _why_cancelled: dict[str, str]

    def _done(self, turn_id: str, _task: object = None) -> None: ...
    async def _execute(self, turn: TurnRequest) -> TurnOutcome | None: ...
    async def _outcome(self, turn: TurnRequest, ctx: TurnContext) -> TurnOutcome | None: ...
    def _release(self, turn: TurnRequest) -> None: ...
    def _on_step(self, step: StepRecord) -> None: ...
    def _observe_end(
        self,
        turn: TurnRequest,
        outcome: TurnOutcome | None,
        stages: list[StageDone],
        why: str | None,
    ) -> None: ...


class TurnTasks:
    """The part of :class:`~toolang_core.runtime.scheduler.Scheduler` that each turn's
    task runs (a mixin: the scheduler holds the state)."""

    async def _run_turn(self: _Scheduler, turn: TurnRequest) -> None:
        if self._observed:
            self.hooks.turn_started(turn, self.runtime)
        outcome: TurnOutcome | None = None
        stages: list[StageDone] = []
        try:
            outcome = await self._execute(turn)
            if outcome is None:
                return
            if not self._after.needed(turn, outcome):
                # Nothing runs after the commit: hand the terminal state in and end here;
                # the turn keeps its slot until the loop has committed it.
                self.commits.hand_in(self.commits.finish(turn, outcome))
                return
            with_state = self._after.with_state(turn, outcome)
            finish = self.commits.finish(turn, outcome, with_state.records)
            try:
                recorded = await self.commits.commit(finish)
            except Exception as exc:
                log.error("turn.finish_failed", turn=turn.id, error=describe_exception(exc))
                return
            if not recorded:  # fenced: the commit logged it
                return
            self._committed.add(turn.id)
            self.commits.log_finished(finish)
            stages = await self._after.run(turn, outcome, with_state, finish)
        finally:  # here, not a done-callback: that costs a loop round-trip per turn
            why = self._why_cancelled.get(turn.id)  # _done forgets it
            self._done(turn.id)
            if self._observed:
                self._observe_end(turn, outcome, stages, why)

    def _on_step(self: _Scheduler, step: StepRecord) -> None:
        self.hooks.turn_step(step, self.runtime)

    def _observe_end(
        self: _Scheduler,
        turn: TurnRequest,
        outcome: TurnOutcome | None,
        stages: list[StageDone],
        why: str | None,
    ) -> None:
        """``toolang_turn_step`` for the final steps, then ``toolang_turn_finished``."""
        if outcome is None:  # given up without an outcome (released or lease lost)
            ended = attrs.evolve(turn, outcome="released" if why == SHUTDOWN else LEASE_LOST)
        else:
            for step in outcome.steps:
                self.hooks.turn_step(step, self.runtime)
            ended = turn.ended(
                outcome.status,
                finished_at=self.clock(),
                output=outcome.output,
                outcome=outcome.outcome,
                error=outcome.error,
            )
        self.hooks.turn_finished(ended, stages, self.runtime)

    async def _execute(self: _Scheduler, turn: TurnRequest) -> TurnOutcome | None:
        """Run the executor; ``None`` means nothing is to be recorded (released or lost)."""
        inbox = self.inbox
        raw = inbox.raw_input(turn.id) if inbox is not None else None
        # The model reads what the submitter wrote; the store keeps it masked.
        ctx = TurnContext(
            turn if raw is None else turn.with_input(raw),
            run_id=self.run_id,
            store=self.store,
            clock=self.clock,
            runtime=self.runtime,
            on_step=self._on_step if self._observed else None,
            slot=self,
        )
        outcome = await self._outcome(turn, ctx)
        if outcome is not None and ctx.deferred:
            # Steps the executor deferred are stored with the terminal state.
            outcome = outcome.with_parts(steps=(*ctx.take_deferred(), *outcome.steps))
        return outcome

    async def _outcome(self: _Scheduler, turn: TurnRequest, ctx: TurnContext) -> TurnOutcome | None:
        try:
            if turn.timeout_seconds is None:  # most turns: no timer to arm (~2 us a turn)
                return await self.executor.execute(ctx)
            async with asyncio.timeout(turn.timeout_seconds):
                return await self.executor.execute(ctx)
        except TimeoutError:
            return TurnOutcome.failed(
                f"timed out after {turn.timeout_seconds:g} s", outcome="timeout"
            )
        except asyncio.CancelledError:
            why = self._why_cancelled.get(turn.id, "canceled")
            if why == SHUTDOWN:
                with contextlib.suppress(Exception):  # handed back: what it did is replayed
                    ctx.store_deferred()
                self._release(turn)
                return None
            if why == LEASE_LOST:
                log.warning("turn.lease_lost", turn=turn.id, attempt=turn.attempt)
                return None
            current = self.store.get(turn.id)
            reason = current.error if current is not None and current.error else "canceled"
            return TurnOutcome(TurnStatus.CANCELED, outcome="canceled", error=reason)
        except LeaseLost:
            log.warning("turn.lease_lost", turn=turn.id, attempt=turn.attempt)
            return None
        except Exception as exc:
            return TurnOutcome.failed(describe_exception(exc), outcome="error")

    def _release(self: _Scheduler, turn: TurnRequest) -> None:
        try:
            self.store.release(
                turn.id,
                run_id=self.run_id,
                attempt=turn.attempt,
                now=self.clock(),
                max_attempts=self.max_attempts,
            )
        except Exception as exc:  # the lease will expire and recovery requeues it
            log.error("turn.release_failed", turn=turn.id, error=describe_exception(exc))
