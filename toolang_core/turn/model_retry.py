"""One model call of the agent loop, made again when it fails: retries, then fallbacks.

A call is tried on the speaker's model; a failure whose kind is in ``[models.retry] on``
(the transient ones: rate limit, overloaded, timeout, server, connection) is tried
again on the same model after a backoff wait, up to ``attempts`` calls in all. Then —
or at once, for a failure that is not retried — the next model of the fallback list
(the agent's ``fallback``, else ``[models] fallback``) gets the call, with its own
``attempts``. A ``refused`` failure (the model or its provider's filter refused the
content) never falls back: asking another model to say what one refused is not a
failure to route around. When the list is used up the turn fails with ``model_error``.

Only the model call is made again, never the turn: the tool calls the loop already made
are in the history the call sends, and stay recorded as they ran.

Every failed attempt is a ``failed`` ``model_call`` step stored under
``<call key>:try:<n>`` — with the model, the error's kind, what happens next and the
wait — *before* the wait starts. A runtime killed during the wait resumes the turn
(replaying the steps before the call) and, from the last such step, knows where it was:
the same model with the attempts it has left, waiting out what remains of the wait (at
most ``max_wait_seconds``), or the next model.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from toolang_core.errors import PLUGIN_FAILURES, ConfigError, ModelError, describe_exception

if TYPE_CHECKING:
    from toolang_core.agents.catalog import AgentCatalog
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.config.model import ModelRetryConfig, ModelsConfig
    from toolang_core.execution.seam import TurnContext
    from toolang_core.models.resolve import ModelResolver
    from toolang_core.models.types import ModelResponse

Next = Literal["retry", "fallback", "give_up"]
NOT_FALLEN_BACK: Final = frozenset({"refused"})
"""Kinds that end the call instead of passing it to the next model."""


@attrs.frozen
class Candidate:
    """A model the call may go to: its name (``provider/model id``) and the model."""

    name: str
    model: Any


class ModelCallFailed(Exception):
    """Every model the call could go to failed; the message names each one's last error."""


def error_kind(exc: BaseException) -> str:
    """The kind of a model call's failure (``error`` when no one classified it)."""
    return exc.kind if isinstance(exc, ModelError) else "error"


def backoff(
    config: ModelRetryConfig,
    retry: int,
    retry_after: float | None = None,
    rand: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait before the ``retry``-th retry of a call on one model (1, 2, …):
    exponential, capped at ``max_wait_seconds``, less up to ``jitter`` of it at random
    (so runtimes that failed together do not all retry together), and never less than
    the service's ``retry_after`` (itself capped)."""
    wait = min(
        config.initial_wait_seconds * config.multiplier ** (retry - 1), config.max_wait_seconds
    )
    wait -= wait * config.jitter * rand()
    if retry_after is not None and retry_after > 0:
        wait = max(wait, min(retry_after, config.max_wait_seconds))
    return round(wait, 3)


def decide(config: ModelRetryConfig, kind: str, tries: int, more_models: bool) -> Next:
    """What follows a failure of ``kind`` on a model called ``tries`` times so far."""
    if kind in config.on and tries < config.attempts:
        return "retry"
    if more_models and kind not in NOT_FALLEN_BACK:
        return "fallback"
    return "give_up"


@attrs.define
class _Position:
    """Where a call is: attempts made (all models), which model, calls on it, the wait."""

    number: int = 0
    index: int = 0
    tries: int = 0
    wait: float = 0.0


class ModelAttempts:
    """Makes one model call of a turn (step key ``key``) until it answers or the models
    are used up. ``call(candidate)`` makes one attempt; ``data`` is the step data every
    attempt's step starts from (the agent); ``shown(candidate)``, what an attempt on
    that model adds to it (the messages as that model was sent them)."""

    def __init__(
        self,
        ctx: TurnContext,
        *,
        key: str,
        config: ModelRetryConfig,
        candidates: tuple[Candidate, ...],
        call: Callable[[Candidate], Awaitable[ModelResponse]],
        data: dict[str, Any],
        shown: Callable[[Candidate], Mapping[str, Any]] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.ctx = ctx
        self.key = key
        self.config = config
        self.candidates = candidates
        self.call = call
        self.data = data
        self.shown = shown
        self.sleep = sleep
        self.errors: list[tuple[str, str]] = []
        """``(model, error)`` of each model given up on so far."""

    async def run(self) -> tuple[Candidate, ModelResponse]:
        """The model that answered and its answer. :raises ModelCallFailed:"""
        at = self._resume()
        if at.wait > 0:
            await self.sleep(at.wait)
        while True:
            candidate = self.candidates[at.index]
            started = self.ctx.clock()
            try:
                return candidate, await self.call(candidate)
            except PLUGIN_FAILURES as exc:  # a model plugin's sys.exit() too
                at.number += 1
                at.tries += 1
                kind = error_kind(exc)
                more = at.index + 1 < len(self.candidates)
                next_ = decide(self.config, kind, at.tries, more)
                retry_after = exc.retry_after if isinstance(exc, ModelError) else None
                at.wait = backoff(self.config, at.tries, retry_after) if next_ == "retry" else 0.0
                error = describe_exception(exc)
                self._record(candidate, at, kind=kind, next_=next_, error=error, started=started)
                if next_ != "retry":
                    self.errors.append((candidate.name, error))
                if next_ == "give_up":
                    raise ModelCallFailed(self._summary()) from None
                if next_ == "fallback":
                    at.index, at.tries = at.index + 1, 0
                else:
                    await self.sleep(at.wait)

    def _summary(self) -> str:
        """``model 'a' failed: …`` (then ``; fallback 'b' failed: …`` per fallback)."""
        return "; ".join(
            f"{'fallback ' if i else 'model '}{name!r} failed: {error}"
            for i, (name, error) in enumerate(self.errors)
        )

    def _record(
        self,
        candidate: Candidate,
        at: _Position,
        *,
        kind: str,
        next_: Next,
        error: str,
        started: float,
    ) -> None:
        """The failed attempt, durable before any wait (the resumed turn reads it)."""
        now = self.ctx.clock()
        data = {
            **self.data,
            **(self.shown(candidate) if self.shown is not None else {}),
            "model": candidate.name,
            "attempt": at.number,
            "model_attempt": at.tries,
            "model_index": at.index,
            "error_kind": kind,
            "transient": kind in self.config.on,
            "next": next_,
        }
        if next_ == "retry":
            data["wait_seconds"] = at.wait
            data["retry_at"] = now + at.wait
        if next_ == "fallback":
            data["fallback_to"] = self.candidates[at.index + 1].name
        self.ctx.record_step(
            "model_call",
            status="failed",
            error=error,
            started_at=started,
            data=data,
            idempotency_key=f"{self.key}:try:{at.number}",
        )

    def _resume(self) -> _Position:
        """Where an earlier attempt of this turn left the call (nothing: the start)."""
        at = _Position()
        last = None
        while (step := self.ctx.find_step(f"{self.key}:try:{at.number + 1}")) is not None:
            at.number += 1
            last = step
            if step.data.get("next") != "retry":
                self.errors.append((str(step.data.get("model")), step.error or ""))
        if last is None:
            return at
        data = last.data
        at.index = int(data.get("model_index", 0))
        at.tries = int(data.get("model_attempt", 0))
        next_ = data.get("next")
        if next_ == "retry":
            left = float(data.get("retry_at", 0)) - self.ctx.clock()
            at.wait = max(0.0, min(left, self.config.max_wait_seconds))
        elif next_ == "fallback":
            at.index, at.tries = at.index + 1, 0
        if next_ == "give_up" or at.index >= len(self.candidates):
            raise ModelCallFailed(self._summary())
        return at


def fallback_specs(models: ModelsConfig, agent: AgentDefinition | None) -> list[tuple[str, str]]:
    """The fallback models of ``agent`` (its own ``fallback``, else ``[models] fallback``;
    ``None``: the runtime's), each with where it was named (for errors)."""
    if agent is not None and agent.fallback is not None:
        where = f"agent {agent.name!r} fallback"
        return [(spec, f"{where}[{i}]") for i, spec in enumerate(agent.fallback)]
    return [(spec, f"[models] fallback[{i}]") for i, spec in enumerate(models.fallback)]


def check_fallbacks(resolver: ModelResolver, models: ModelsConfig, agents: AgentCatalog) -> None:
    """Every fallback model — ``[models] fallback``, each active agent's own — has a
    provider that gives it (the runtime checks this when it starts).

    :raises ConfigError: one line per fallback model that cannot be had, naming where
        it was named and why.
    """
    named = fallback_specs(models, None)
    try:
        active = agents.registry.active()
    except Exception:  # a broken registry is reported by the turns that need it
        active = []
    for agent in active:
        if agent.fallback is not None:
            named.extend(fallback_specs(models, agent))
    problems = []
    for spec, where in named:
        try:
            resolver.resolve(spec, wanted_by=where)
        except ModelError as exc:
            problems.append(f"{where} = {spec!r}: {exc}")
    if problems:
        raise ConfigError(problems)
