"""The turn-executor seam: what runs a claimed turn.

It sits below both the runtime (whose scheduler claims turns and hands them over) and
the agent turn (the real executor), so neither imports the other for these types.

The scheduler hands each admitted turn to the configured :class:`TurnExecutor` inside
its own task, with a :class:`TurnContext`. The agent loop is the real executor;
:class:`EchoExecutor` (``[runtime] executor = "echo"``) answers with the input and
exists for the engine's tests and benchmarks — it is not an agent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

import attrs

from toolang_core.redaction import current
from toolang_core.store.types import StepRecord, StepStatus, TurnRequest, TurnStatus

if TYPE_CHECKING:
    from toolang_core.memory.types import MemoryWriteBatch
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.store.protocol import ExecutionStore


SHUTDOWN: Final = "shutdown"
"""Why the scheduler cancels a running turn when the runtime stops."""
LEASE_LOST: Final = "lease_lost"
"""Why the scheduler cancels a running turn another runtime has taken over."""

AFTER_KIND: Final = "toolang.turn.after"
"""The record kind of what the after-turn stages did for one turn."""
PROMPT_TRACE_KIND: Final = "toolang.prompt_trace"
"""The record kind of one turn's prompt trace."""
STAGES: Final = ("turn_state", "prompt_trace", "memory_write", "events", "delivery")
"""The after-turn stages, in the order they run."""


@attrs.frozen
class StageDone:
    """How one after-turn stage went for one turn (``toolang_turn_finished`` gets them)."""

    stage: str
    ok: bool
    at: float
    detail: Mapping[str, Any] = attrs.field(factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.stage, "ok": self.ok, "at": self.at, "detail": dict(self.detail)}


@attrs.frozen
class AfterTurn:
    """What an executor hands to the post-turn stages with its outcome."""

    prompt_trace: Mapping[str, Any] | None = None
    memory: MemoryWriteBatch | None = None
    trace_masked: bool = False
    """The prompt trace passed the redaction policy already (it was made of a stored
    step's data): the prompt-trace stage stores it without walking it again."""


class LeaseLost(Exception):
    """This runtime no longer holds the turn (another took it over); stop at once."""


@attrs.frozen
class TurnOutcome:
    """How a turn ended. ``outcome`` is a machine-readable reason (``timeout``, …)."""

    status: TurnStatus
    output: str | None = None
    outcome: str | None = None
    error: str | None = None
    steps: tuple[StepRecord, ...] = ()
    """Final steps, stored in the same transaction as the terminal state."""
    after: AfterTurn | None = None
    """What the post-turn stages should do (prompt trace, memory write)."""

    def with_parts(
        self, *, steps: tuple[StepRecord, ...] | None = None, after: AfterTurn | None = None
    ) -> TurnOutcome:
        """This outcome with its final ``steps`` or ``after`` replaced when given
        (``attrs.evolve`` at a third of the cost: done for every turn)."""
        return TurnOutcome(
            self.status,
            self.output,
            self.outcome,
            self.error,
            self.steps if steps is None else steps,
            self.after if after is None else after,
        )

    @classmethod
    def completed(
        cls, output: str, outcome: str | None = None, *, after: AfterTurn | None = None
    ) -> TurnOutcome:
        return cls(TurnStatus.COMPLETED, output=output, outcome=outcome, after=after)

    @classmethod
    def failed(
        cls, error: str, outcome: str = "error", *, after: AfterTurn | None = None
    ) -> TurnOutcome:
        return cls(TurnStatus.FAILED, outcome=outcome, error=error, after=after)


class TurnSlot(Protocol):
    """What the scheduler running a turn lends its executor: the turn's slot.

    The scheduler hands itself (:attr:`TurnContext.slot`); the turn reaches no further
    into it.
    """

    def parked(self, turn_id: str) -> AbstractAsyncContextManager[None]:
        """While the body runs, ``turn_id`` waits for a person: its slot is free for
        other work, and a shutdown hands the turn back at once."""
        ...

    def lend(self, turn_id: str) -> AbstractContextManager[None]:
        """While the body runs, ``turn_id`` waits for other turns (its task runs): its
        slot of the global concurrency is lent to them."""
        ...

    def cancel_reason(self, turn_id: str) -> str | None:
        """Why the scheduler canceled ``turn_id`` (``canceled``, :data:`SHUTDOWN`,
        :data:`LEASE_LOST`); ``None`` when it did not (e.g. the turn's time limit)."""
        ...


class TurnContext:
    """What an executor may do with the turn it runs, always on this runtime's lease."""

    def __init__(
        self,
        turn: TurnRequest,
        *,
        run_id: str,
        store: ExecutionStore,
        clock: Callable[[], float] = time.time,
        runtime: RuntimeView | None = None,
        on_step: Callable[[StepRecord], None] | None = None,
        slot: TurnSlot | None = None,
    ) -> None:
        """Leaving ``runtime`` out is deprecated since 0.2 (an error from 0.3): it warns,
        and ``self.runtime`` is ``None`` as in 0.1. ``slot`` is the scheduler running the
        turn (``None`` outside one: a parked or waiting turn then keeps what it holds)."""
        if runtime is None:
            from toolang_core.tools.types import warn_missing_runtime

            warn_missing_runtime("TurnContext", stacklevel=2)
        self.turn = turn
        self.on_step = on_step
        """Told of every step stored (the ``toolang_turn_step`` hook), when set."""
        self.slot = slot
        self.run_id = run_id
        self.store = store
        self.clock = clock
        self.runtime: RuntimeView = cast("RuntimeView", runtime)
        # The runtime's redaction policy masks every step's data and error.
        policy = runtime.redaction if runtime is not None else current()
        self._redact, self._redact_text = policy.value, policy.text
        self._deferred: list[StepRecord] = []
        self._keys: set[str] = set()
        """Idempotency keys this context stored or deferred (a first run looks only
        these up: no earlier attempt stored anything)."""

    @property
    def attempt(self) -> int:
        return self.turn.attempt

    def _step(
        self,
        kind: str,
        *,
        data: Mapping[str, Any] | None,
        status: str,
        error: str | None,
        started_at: float | None,
        idempotency_key: str | None,
    ) -> StepRecord:
        now = self.clock()
        if idempotency_key is not None:
            self._keys.add(idempotency_key)
        return StepRecord(
            turn_id=self.turn.id,
            seq=0,
            attempt=self.attempt,
            kind=kind,
            status=_step_status(status),
            started_at=started_at if started_at is not None else now,
            finished_at=now,
            data=self._redact(data) if data else {},
            error=None if error is None else self._redact_text(error),
            idempotency_key=idempotency_key,
        )

    def record_step(
        self,
        kind: str,
        *,
        data: Mapping[str, Any] | None = None,
        status: str = "completed",
        error: str | None = None,
        started_at: float | None = None,
        idempotency_key: str | None = None,
    ) -> StepRecord:
        """Store a finished step of this turn (or, with status ``intent``, a tool call
        about to run: :meth:`complete_step` records its result), its data and error masked
        by the redaction policy (a replayed step is the masked one). Steps deferred
        before it are stored with it, in the same transaction.

        :raises LeaseLost: when another runtime took the turn over.
        """
        step = self._step(
            kind,
            data=data,
            status=status,
            error=error,
            started_at=started_at,
            idempotency_key=idempotency_key,
        )
        if self._deferred:
            return self._store_deferred(step)[-1]
        stored = self.store.record_step(step, run_id=self.run_id)
        if stored is None:
            raise LeaseLost(f"turn {self.turn.id}: this runtime no longer holds its lease")
        if self.on_step is not None and stored.status != "intent":
            self.on_step(stored)
        return stored

    def defer_step(
        self,
        kind: str,
        *,
        data: Mapping[str, Any] | None = None,
        status: str = "completed",
        error: str | None = None,
        started_at: float | None = None,
        idempotency_key: str | None = None,
    ) -> StepRecord:
        """A finished step stored with this turn's next write rather than in a
        transaction of its own: with the next :meth:`record_step` (a tool call's intent,
        which must be durable before its tool runs), :meth:`complete_step` or
        :meth:`set_status`, or else with the turn's terminal state. Masked like
        :meth:`record_step`; returned unnumbered (``seq`` 0).

        A crash before that write loses the step: the resumed turn does its part again
        (a model call is made again). For what may be redone, never for an intent.
        """
        step = self._step(
            kind,
            data=data,
            status=status,
            error=error,
            started_at=started_at,
            idempotency_key=idempotency_key,
        )
        self._deferred.append(step)
        return step

    @property
    def deferred(self) -> bool:
        """Whether steps wait to be stored (:meth:`defer_step`)."""
        return bool(self._deferred)

    def store_deferred(self) -> None:
        """Store the deferred steps now, in one transaction. :raises LeaseLost:"""
        if self._deferred:
            self._store_deferred(None)

    def take_deferred(self) -> tuple[StepRecord, ...]:
        """The deferred steps, handed over to be stored with the terminal state."""
        taken, self._deferred = tuple(self._deferred), []
        return taken

    def _store_deferred(self, then: StepRecord | None) -> list[StepRecord]:
        steps = self._deferred if then is None else [*self._deferred, then]
        stored = self.store.record_steps(steps, run_id=self.run_id)
        if stored is None:
            raise LeaseLost(f"turn {self.turn.id}: this runtime no longer holds its lease")
        self._deferred = []
        if self.on_step is not None:
            for one in stored:
                if one.status != "intent":
                    self.on_step(one)
        return stored

    def complete_step(
        self,
        intent: StepRecord,
        *,
        data: Mapping[str, Any],
        status: str = "completed",
        error: str | None = None,
    ) -> StepRecord:
        """Record the result of the tool call ``intent`` announced (this attempt's, or an
        earlier one's found in doubt), in its place, masked like :meth:`record_step`.
        With status ``intent`` it renews the intent for this attempt (an in-doubt call
        about to run again).

        :raises LeaseLost: when another runtime took the turn over.
        """
        self.store_deferred()
        step = StepRecord(  # attrs.evolve of the intent, at a third of the cost
            turn_id=intent.turn_id,
            seq=intent.seq,
            attempt=self.attempt,
            kind=intent.kind,
            status=_step_status(status),
            started_at=intent.started_at,
            finished_at=self.clock(),
            data=self._redact(data),
            error=None if error is None else self._redact_text(error),
            idempotency_key=intent.idempotency_key,
        )
        stored = self.store.complete_step(step, run_id=self.run_id)
        if stored is None:
            raise LeaseLost(f"turn {self.turn.id}: this runtime no longer holds its lease")
        if self.on_step is not None and stored.status != "intent":
            self.on_step(stored)
        return stored

    def final_step(
        self,
        kind: str,
        *,
        data: Mapping[str, Any] | None = None,
        status: str = "completed",
        error: str | None = None,
        started_at: float | None = None,
    ) -> StepRecord:
        """A step to store together with the turn's terminal state (put it in
        ``TurnOutcome.steps``): one commit instead of two for the last step of a turn.
        Its data and error are masked as :meth:`record_step`'s are."""
        now = self.clock()
        return StepRecord(
            turn_id=self.turn.id,
            seq=0,
            attempt=self.attempt,
            kind=kind,
            status="failed" if status == "failed" else "completed",
            started_at=started_at if started_at is not None else now,
            finished_at=now,
            data=self._redact(data) if data else {},
            error=None if error is None else self._redact_text(error),
        )

    def find_step(self, idempotency_key: str) -> StepRecord | None:
        """A step of any attempt with this key (to replay instead of redo; an ``intent``
        step is a tool call in doubt), deferred ones included."""
        for step in self._deferred:
            if step.idempotency_key == idempotency_key:
                return step
        if self.attempt == 1 and idempotency_key not in self._keys:
            return None  # the turn's first run, and not a key it stored: nothing to find
        return self.store.find_step(idempotency_key)

    def take_steer(self) -> list[TurnRequest]:
        """New input steered into this turn since the last call (call at model-call
        boundaries); those requests are marked ``steered``."""
        return self.store.take_steer(
            self.turn.id, run_id=self.run_id, attempt=self.attempt, now=self.clock()
        )

    def set_status(self, status: TurnStatus) -> None:
        """Move between ``running`` and ``awaiting_approval`` (the deferred steps are
        stored first: waiting for a person may take long). :raises LeaseLost:"""
        self.store_deferred()
        if not self.store.set_active_status(
            self.turn.id, run_id=self.run_id, attempt=self.attempt, status=status, now=self.clock()
        ):
            raise LeaseLost(f"turn {self.turn.id}: this runtime no longer holds its lease")


def _step_status(status: str) -> StepStatus:
    return "intent" if status == "intent" else "failed" if status == "failed" else "completed"


class TurnExecutor(Protocol):
    """Runs one turn to an outcome. Cancellation arrives as ``asyncio.CancelledError``.

    An executor may also have ``async def prepare(self) -> None``, which
    :meth:`Runtime.serve` awaits once before the first turn is admitted.
    """

    async def execute(self, ctx: TurnContext) -> TurnOutcome: ...


class EchoExecutor:
    """Answers every turn with its input, recording one ``echo`` step.

    For the engine's tests and benchmarks only. A request's ``meta["echo"]`` may ask for
    ``{"delay_seconds": 0.1}`` (work that takes time) or ``{"fail": "message"}``.
    """

    async def execute(self, ctx: TurnContext) -> TurnOutcome:
        started = ctx.clock()
        options = ctx.turn.meta.get("echo")
        if options:  # only the engine's tests ask for these
            delay = float(options.get("delay_seconds", 0))
            if delay > 0:
                await asyncio.sleep(delay)
            if options.get("fail"):
                error = str(options["fail"])
                step = ctx.final_step("echo", status="failed", error=error, started_at=started)
                return TurnOutcome(TurnStatus.FAILED, outcome="error", error=error, steps=(step,))
        step = ctx.final_step("echo", data={"output": ctx.turn.input}, started_at=started)
        return TurnOutcome(TurnStatus.COMPLETED, output=ctx.turn.input, steps=(step,))
