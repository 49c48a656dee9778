"""Running eval cases through the real runtime, in a home of their own.

Every case becomes a turn request on a thread of its own (``eval:<n>``, source
``eval``) in a fresh SQLite store under a temporary home: the configured plugins,
agents, tools and memory plugin, but none of the real store's history, memory or
files, no turn source, and no door opened for others (the run is a one-shot: the HTTP
server and listeners stay closed). The runtime serves until every case's turn ended;
each turn is then read back from that store (:class:`~toolang_core.evals.types.Observed`)
and scored by the case's evaluators.
"""

from __future__ import annotations

import asyncio
import inspect
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core.agents.catalog import AgentCatalog
from toolang_core.evals.types import (
    CaseResult,
    EvalCase,
    Observed,
    ScoredVerdict,
    ToolCallSeen,
)

if TYPE_CHECKING:
    from toolang_core.agents.registry import AgentRegistry
    from toolang_core.config.model import ToolangConfig
    from toolang_core.models.types import Model
    from toolang_core.plugins.host import PluginHost
    from toolang_core.runtime import Runtime
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.store.types import StepRecord, TurnRequest

SOURCE: Final = "eval"
"""The turn source eval turns are submitted as (and their thread group)."""


@attrs.frozen
class EvalOptions:
    """What every case runs with: ``agent`` and ``model`` override the configured ones
    (``None``: the case's agent, else the recorded turn's, else routing as usual; the
    agent's model), ``owner`` is whose turns they are, ``concurrency`` how many run at
    once (``None``: ``[scheduler] max_running``), ``timeout_seconds`` each turn's limit."""

    agent: str | None = None
    model: str | None = None
    owner: str | None = None
    concurrency: int | None = None
    timeout_seconds: float | None = None


def replay_meta(recorded_store: ExecutionStore | None, case: EvalCase) -> dict[str, Any]:
    """For a case drawn from a recorded turn: the request metadata that makes its eval
    turn a replay of that turn (:func:`toolang_core.history.plan_replay`) — a tool call
    matching a recorded one (same tool, same canonical parameters) is answered with the
    recorded result, any other is stopped without running. Empty for a written case.

    Who may see the recorded turn was settled when it was selected
    (:mod:`.selection`); the plan is read for the turn's own owner."""
    if case.recorded is None or recorded_store is None:
        return {}
    from toolang_core.history import plan_replay

    turn = recorded_store.get(case.recorded.turn_id)
    if turn is None:  # pragma: no cover - selected from this store just now
        return {}
    return plan_replay(recorded_store, turn.id, owner=turn.owner).meta()


def isolated_config(config: ToolangConfig, home: Path, options: EvalOptions) -> ToolangConfig:
    """``config`` moved into ``home``: an embedded SQLite store there, tools working in
    ``home/work``, no turn source, ``options``' model and concurrency."""
    from toolang_core.config.model import StoreConfig

    scheduler = config.scheduler
    if options.concurrency is not None:
        scheduler = attrs.evolve(scheduler, max_running=options.concurrency)
    models = config.models
    if options.model is not None:
        models = attrs.evolve(models, default=options.model, fallback=())
    return attrs.evolve(
        config,
        home=home,
        store=StoreConfig(backend="sqlite", synchronous="normal"),
        runtime=attrs.evolve(
            config.runtime, sources=(), shutdown_grace_seconds=0.0, poll_seconds=0.05
        ),
        scheduler=scheduler,
        models=models,
        tools=attrs.evolve(config.tools, workdir=home / "work"),
        attachments=attrs.evolve(config.attachments, dir=None),
    )


class _ModelOverride(AgentCatalog):
    """The runtime's agents, every one answering with the same model (``--model``)."""

    def __init__(self, runtime: Runtime, model: str) -> None:
        super().__init__(runtime)
        self._model = model
        self._from: tuple[AgentRegistry, AgentRegistry] | None = None

    @property
    def registry(self) -> AgentRegistry:
        base = super().registry
        if self._from is None or self._from[0] is not base:
            definitions = {
                name: attrs.evolve(d, model=self._model, fallback=())
                for name, d in base.definitions.items()
            }
            self._from = (base, attrs.evolve(base, definitions=definitions))
        return self._from[1]


@attrs.define
class _Context:
    """What evaluators may use (:class:`~toolang_core.evals.types.EvalContext`)."""

    runtime: Runtime
    _models: Any = None

    def model(self, spec: str) -> Model:
        from toolang_core.models.resolve import ModelResolver

        if self._models is None:
            self._models = ModelResolver(self.runtime)
        resolved: Model = self._models.resolve(spec, wanted_by="evaluator 'judge'")
        return resolved

    @property
    def default_model(self) -> str:
        return self.runtime.config.models.default


async def run_cases(
    config: ToolangConfig,
    host: PluginHost,
    cases: Sequence[EvalCase],
    options: EvalOptions,
    *,
    env: Mapping[str, str] | None = None,
    recorded_store: ExecutionStore | None = None,
    home: Path | None = None,
) -> tuple[list[CaseResult], str]:
    """Run ``cases`` in an isolated home (``home``, else a temporary directory removed
    afterwards) and score them; returns the results in case order and the tool mode
    (``"replay"`` when recorded turns' tool calls are answered from their records:
    :func:`replay_meta`; ``"live"`` for written cases only)."""
    if home is not None:
        return await _run_in(config, host, cases, options, env=env, store=recorded_store, home=home)
    with tempfile.TemporaryDirectory(prefix="toolang-eval-") as temporary:
        return await _run_in(
            config, host, cases, options, env=env, store=recorded_store, home=Path(temporary)
        )


async def _run_in(
    config: ToolangConfig,
    host: PluginHost,
    cases: Sequence[EvalCase],
    options: EvalOptions,
    *,
    env: Mapping[str, str] | None,
    store: ExecutionStore | None,
    home: Path,
) -> tuple[list[CaseResult], str]:
    from toolang_core.runtime import Runtime

    (home / "work").mkdir(parents=True, exist_ok=True)
    runtime = Runtime(isolated_config(config, home, options), host, env=env)
    if options.model is not None:
        model = options.model
        runtime.plugin_state("toolang:agents", lambda: _ModelOverride(runtime, model))
    inbox = runtime.open_inbox()
    try:
        replays = [replay_meta(store, case) for case in cases]
        turn_ids = [
            _submit(inbox, case, number, options, replay)
            for number, (case, replay) in enumerate(zip(cases, replays, strict=True), 1)
        ]
        tool_mode = "replay" if any(replays) else "live"
        stop = asyncio.Event()
        watch = asyncio.create_task(_stop_when_parked(inbox.store, stop))
        try:
            await runtime.serve(stop, sources=(), until_idle=True, one_shot=True)
        finally:
            watch.cancel()
        observed = [_observe(inbox.store, turn_id) for turn_id in turn_ids]
    finally:
        inbox.store.close()
    context = _Context(runtime)
    limit = asyncio.Semaphore(max(1, options.concurrency or config.scheduler.max_running))
    results = await asyncio.gather(
        *(_score(case, seen, context, limit) for case, seen in zip(cases, observed, strict=True))
    )
    return list(results), tool_mode


PARKED_CHECK_SECONDS: Final = 0.25


async def _stop_when_parked(store: ExecutionStore, stop: asyncio.Event) -> None:
    """Stop serving once no case is queued, running or canceling: a turn waiting for a
    person (an approval, a question) would wait forever in a home nobody looks at; it
    ends the eval as it stands (its status says so)."""
    from toolang_core.store.types import TurnStatus

    moving = {TurnStatus.QUEUED, TurnStatus.RUNNING, TurnStatus.CANCELING}
    while not stop.is_set():
        await asyncio.sleep(PARKED_CHECK_SECONDS)
        if not any(c.status in moving and c.count for c in store.counts()):
            stop.set()


def _submit(
    inbox: Any, case: EvalCase, number: int, options: EvalOptions, replay: Mapping[str, Any]
) -> str:
    from toolang_core.store.types import NewTurnRequest

    recorded_agent = case.recorded.agent if case.recorded is not None else None
    submitted = inbox.submit(
        NewTurnRequest(
            source=SOURCE,
            thread_id=f"{SOURCE}:{number}",
            input=case.input,
            channel=SOURCE,
            agent=options.agent or case.agent or recorded_agent,
            owner=options.owner,
            timeout_seconds=options.timeout_seconds,
            meta={"eval_case": case.id, **replay},
        )
    )
    turn_id: str = submitted.id
    return turn_id


def _observe(store: ExecutionStore, turn_id: str) -> Observed:
    turn = store.get(turn_id)
    if turn is None:  # pragma: no cover - the store just accepted it
        return Observed(turn_id, "missing")
    return observe(turn, store.steps(turn_id))


def observe(turn: TurnRequest, steps: Sequence[StepRecord]) -> Observed:
    """What ``turn`` did, from its request and its steps."""
    tokens_in = tokens_out = model_calls = 0
    agent = model = None
    calls = []
    for step in steps:
        data = step.data
        if step.kind == "model_call":
            model_calls += 1
            tokens = data.get("tokens") or {}
            tokens_in += int(tokens.get("input", 0))
            tokens_out += int(tokens.get("output", 0))
            model = data.get("model", model)
        elif step.kind == "tool_call" and step.status != "intent":
            calls.append(tool_call_seen(step))
        elif step.kind == "prompt_build":
            agent = data.get("agent", agent)
    latency = None
    if turn.started_at is not None and turn.finished_at is not None:
        latency = max(0.0, turn.finished_at - turn.started_at)
    return Observed(
        turn_id=turn.id,
        status=turn.status.value,
        output=turn.output,
        outcome=turn.outcome,
        error=turn.error,
        latency_seconds=latency,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        model_calls=model_calls,
        tool_calls=tuple(calls),
        agent=agent or turn.agent,
        model=model,
    )


def tool_call_seen(step: StepRecord) -> ToolCallSeen:
    """The tool call a ``tool_call`` step records."""
    call = step.data.get("call") or {}
    params = call.get("params") or {}
    return ToolCallSeen(
        str(call.get("name", "")),
        dict(params) if isinstance(params, Mapping) else {},
        step.status == "completed",
    )


async def _score(
    case: EvalCase, observed: Observed, context: _Context, limit: asyncio.Semaphore
) -> CaseResult:
    verdicts = []
    for use in case.evaluators:
        try:
            answer = use.evaluator.evaluate(case, observed, context)
            if inspect.isawaitable(answer):
                async with limit:
                    answer = await answer
            verdicts.append(ScoredVerdict(use.name, answer.passed, answer.score, answer.reason))
        except Exception as exc:  # one broken evaluator fails its verdict, not the run
            reason = f"the evaluator raised {type(exc).__name__}: {exc}"
            verdicts.append(ScoredVerdict(use.name, False, None, reason[:300]))
    return CaseResult(
        case_id=case.id,
        input=case.input,
        origin=case.origin,
        tags=case.tags,
        status=observed.status,
        output=observed.output if observed.output is not None else observed.error,
        latency_seconds=observed.latency_seconds,
        tokens=observed.total_tokens,
        verdicts=tuple(verdicts),
        turn_id=observed.turn_id,
        recorded_turn=case.recorded.turn_id if case.recorded is not None else None,
    )
