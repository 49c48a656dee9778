"""What happens after a turn's terminal state is stored, in a fixed order.

    1. local turn state   the terminal status, output and final steps (already committed
                          by the scheduler when this runs); a task run's turn is
                          finalized here (its final record, its note in the parent)
    2. prompt trace       the turn's prompt trace record: agent, model, the memory
                          plugin, the recall request summary, its diagnostics, degraded
    3. memory write       the exchange, remembered through the memory plugin
    4. bus events         ``turn.<status>`` to every ``toolang_on_event`` subscriber
    5. outbound delivery  ``toolang_deliver_turn`` implementations send the reply out

A failure at 2-5 is recorded and never rewrites the completed turn. The prompt trace
is committed in the transaction of step 1 (:meth:`AfterTurnStages.with_state`: no
commit of its own, and durable before stage 3 starts). What each stage did is stored as
the record ``toolang.turn.after`` of the turn (shown by ``toolang turns trace``), handed
to the scheduler's next commit pass with the other turns' (``later``) — only when there
was more to do than step 1, so a runtime without memory, subscribers or delivery pays
nothing here. When any of 3-5 applies, the record is first written as it stands before
them in the transaction of step 1, naming them ``unfinished``: a crash before their own
record is committed leaves them shown as not recorded, never as having had nothing to
do. A restart does not run them again.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import structlog

from toolang_core.errors import describe_exception
from toolang_core.events import Event
from toolang_core.execution.seam import (
    AFTER_KIND,
    PROMPT_TRACE_KIND,
    STAGES,
    AfterTurn,
    StageDone,
)
from toolang_core.store.json_text import check
from toolang_core.taskruns.view import is_task_run

if TYPE_CHECKING:
    from toolang_core.execution.seam import TurnOutcome
    from toolang_core.hookspecs.rules import HookFailure
    from toolang_core.memory.types import MemoryWriteBatch
    from toolang_core.plugins.facade import Hooks
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.store.types import Finish, RecordWrite, TurnRequest

# AfterTurn, StageDone and the record kinds moved below the runtime and the agent turn
# (toolang_core.execution.seam); re-exported here for the older import path.
__all__ = [
    "AFTER_KIND",
    "AFTER_STAGES",
    "PROMPT_TRACE_KIND",
    "STAGES",
    "AfterTurn",
    "AfterTurnStages",
    "StageDone",
]

AFTER_STAGES = STAGES
"""The five after-turn stages in their fixed order (public as ``toolang_core.AFTER_STAGES``).
The record ``AFTER_KIND`` holds those that applied: a stage with nothing to do — no
prompt trace, memory off or the source not remembered, no event subscriber, no delivery
plugin — is not recorded, and a turn with nothing after stage 1 records nothing. Until
stages 3-5 have run and their record is written, it holds stages 1-2 and names those
3-5 that apply ``unfinished`` (committed with the turn's state)."""

log = structlog.get_logger("toolang.turn")


class Later(Protocol):
    """Writes a record with the scheduler's next commit pass (``TurnCommits.later``)."""

    def __call__(
        self, kind: str, key: str, data: dict[str, Any], *, foreign: Sequence[object] | None
    ) -> None: ...


@attrs.frozen
class WithState:
    """What stage 2 commits with a turn's terminal state: its prompt trace as a record,
    or why it could not be stored."""

    records: tuple[RecordWrite, ...] = ()
    error: str | None = None


class AfterTurnStages:
    """Runs stages 2-5 for one finished turn of one runtime."""

    def __init__(
        self,
        runtime: RuntimeView,
        store: ExecutionStore,
        *,
        hooks: Hooks,
        run_id: str,
        clock: Callable[[], float] = time.time,
        publish: Callable[[Event], Awaitable[list[HookFailure]]] | None = None,
        has_subscribers: Callable[[], bool] = lambda: False,
        later: Later | None = None,
    ) -> None:
        """``later(kind, key, data, foreign=...)`` writes a record soon, with others
        (the scheduler's next commit pass; see :meth:`TurnCommits.later
        <toolang_core.runtime.commits.TurnCommits.later>`); without it the record is
        written at once."""
        self.runtime = runtime
        self.hooks = hooks
        self.later = later
        self.store = store
        self.run_id = run_id
        self.clock = clock
        self.publish = publish
        self.has_subscribers = has_subscribers

    def needed(self, turn: TurnRequest, outcome: TurnOutcome) -> bool:
        """Whether any of stages 2-5 (or a task run's finalizing) applies to this turn."""
        return (
            outcome.after is not None
            or self._publishes()
            or self._delivers()
            or self._finalizes(turn)
        )

    def _publishes(self) -> bool:
        return self.publish is not None and self.has_subscribers()

    def _delivers(self) -> bool:
        return self.hooks.implemented("toolang_deliver_turn")

    def _finalizes(self, turn: TurnRequest) -> bool:
        return is_task_run(turn)

    def with_state(self, turn: TurnRequest, outcome: TurnOutcome) -> WithState:
        """Stage 2 for the commit of stage 1: the prompt trace as a record to write in
        the same transaction (masked; checked to be storable, so it cannot fail the
        commit of the turn's state) — and, when stages 3-5 will run, the after-record
        as it stands before them (``unfinished``: those stages, by name), which their
        own after-record replaces once they have run."""
        state = self._prompt_trace(turn, outcome.after)
        unfinished = self._unfinished(outcome)
        if not unfinished:
            return state
        # Stages 3-5 have effects and run after this commit; their own record comes
        # later (with a later commit pass). Until it does, the record says they began
        # and were not recorded: a crash in between must not read as "nothing to do".
        now = self.clock()
        done = [StageDone("turn_state", True, now, {"status": outcome.status.value})]
        if outcome.after is not None and outcome.after.prompt_trace is not None:
            detail = {} if state.error is None else {"error": state.error}
            done.append(StageDone("prompt_trace", state.error is None, now, detail))
        begun = {"stages": [d.to_json() for d in done], "unfinished": unfinished}
        return WithState((*state.records, (AFTER_KIND, turn.id, begun)), state.error)

    def _prompt_trace(self, turn: TurnRequest, after: AfterTurn | None) -> WithState:
        if after is None or after.prompt_trace is None:
            return WithState()
        try:
            if after.trace_masked:  # a stored step's data: masked and storable already
                data = dict(after.prompt_trace)
            else:
                data = self.runtime.redaction.value(dict(after.prompt_trace))
                check(data)  # as the store writes it: no NaN, no lone surrogate
        except Exception as exc:
            error = describe_exception(exc)
            log.warning("turn.after_failed", turn=turn.id, stage="prompt_trace", error=error)
            return WithState(error=error)
        return WithState(((PROMPT_TRACE_KIND, turn.id, data),))

    def _unfinished(self, outcome: TurnOutcome) -> list[str]:
        """The stages with effects (3-5) that will run after the commit of stage 1."""
        unfinished = []
        if outcome.after is not None and outcome.after.memory is not None:
            unfinished.append("memory_write")
        if self._publishes():
            unfinished.append("events")
        if self._delivers():
            unfinished.append("delivery")
        return unfinished

    async def run(
        self,
        turn: TurnRequest,
        outcome: TurnOutcome,
        with_state: WithState,
        committed: Finish | None = None,
    ) -> list[StageDone]:
        """Do what applies, in order; return what was done and recorded (stage 1 first),
        or nothing when stage 1 was all there was. ``with_state`` is what
        :meth:`with_state` gave for ``turn``, committed with its terminal state;
        ``committed``, that terminal state as stored (its output and error masked
        already: delivery hands them on rather than masking them again)."""
        started = self.clock()
        if self._finalizes(turn):
            try:
                await self.runtime.task_runs.finalize(turn.id)
            except Exception as exc:  # the runtime's sweep finalizes it later
                log.warning("taskrun.finalize_failed", run=turn.id, error=describe_exception(exc))
        done: list[StageDone] = []
        after = outcome.after
        if after is not None and after.prompt_trace is not None:
            error = with_state.error
            detail = {} if error is None else {"error": error}
            done.append(StageDone("prompt_trace", error is None, self.clock(), detail))
        if after is not None and after.memory is not None:
            done.append(await self._memory_write(after.memory))
        if self._publishes():
            done.append(await self._events(turn, outcome))
        if self._delivers():
            done.append(await self._delivery(turn, outcome, committed))
        if not done:  # the common case of a bare runtime: nothing more to record
            return []
        done.insert(0, StageDone("turn_state", True, started, {"status": outcome.status.value}))
        self._record(turn, done)
        return done

    async def _memory_write(self, batch: MemoryWriteBatch) -> StageDone:
        memory = self.runtime.memory
        if memory is None:
            return StageDone("memory_write", False, self.clock(), {"error": "memory is off"})
        _written, outcome = await memory.remember(batch)
        return StageDone("memory_write", outcome.ok, self.clock(), outcome.to_json())

    async def _events(self, turn: TurnRequest, outcome: TurnOutcome) -> StageDone:
        assert self.publish is not None
        event = Event(
            f"turn.{outcome.status.value}",
            {"source": turn.source, "outcome": outcome.outcome, "attempt": turn.attempt},
            run_id=self.run_id,
            thread_id=turn.thread_id,
            turn_id=turn.id,
        )
        failures = await self.publish(event)
        detail = {"event": event.kind, "failures": [f"{f.plugin}: {f.error}" for f in failures]}
        return StageDone("events", not failures, self.clock(), detail)

    async def _delivery(
        self, turn: TurnRequest, outcome: TurnOutcome, committed: Finish | None
    ) -> StageDone:
        # Delivered as stored: what a channel shows passes the redaction policy too.
        redact_text = self.runtime.redaction.text
        if committed is None:
            output = None if outcome.output is None else redact_text(outcome.output)
            error = None if outcome.error is None else redact_text(outcome.error)
        else:
            output, error = committed.output, committed.error
        finished = turn.ended(
            outcome.status,
            finished_at=turn.finished_at,
            output=output,
            outcome=outcome.outcome,
            error=error,
            input=redact_text(turn.input),
        )
        outcomes = await self.hooks.deliver_turn(finished, self.runtime)
        failures = [f"{plugin}: {f.error}" for plugin, f in outcomes if f is not None]
        delivered = [plugin for plugin, f in outcomes if f is None]
        return StageDone(
            "delivery", not failures, self.clock(), {"by": delivered, "failures": failures}
        )

    def _record(self, turn: TurnRequest, done: list[StageDone]) -> None:
        data = {"stages": [d.to_json() for d in done]}
        if self.later is not None:
            # Every stage's detail is the runtime's own strings, numbers and flags but
            # the memory write's: the memory plugin's outcome (its request, diagnostics).
            foreign = [s["detail"] for s in data["stages"] if s["stage"] == "memory_write"]
            self.later(AFTER_KIND, turn.id, data, foreign=foreign)
            return
        try:
            self.store.put_record(AFTER_KIND, turn.id, data, now=self.clock())
        except Exception as exc:  # the turn is complete; its after-record is a nicety
            log.warning("turn.after_failed", turn=turn.id, stage="record", error=str(exc))
