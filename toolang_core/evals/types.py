"""What an evaluation is made of: cases, what a case's turn did, verdicts, results.

A *case* is one input to run through the runtime with what it is judged by; its turn's
*observation* (output, tool calls, latency, tokens) is scored by each of the case's
*evaluators*, each giving a *verdict*. An evaluator is a plugin contribution
(``toolang_register_evaluators``); the built-in ones are in
:mod:`toolang_core.evals.builtin`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

if TYPE_CHECKING:
    from toolang_core.models.types import Model


@attrs.frozen
class ToolCallSeen:
    """One tool call a turn made: the tool, its parameters (as the model asked for
    them) and whether it succeeded."""

    name: str
    params: Mapping[str, Any] = attrs.field(factory=dict)
    ok: bool = True


@attrs.frozen
class RecordedTurn:
    """A turn of the store an eval case was drawn from (``--from-turns``): its id,
    thread, agent, output and tool calls as recorded."""

    turn_id: str
    thread_id: str
    input: str
    agent: str | None
    output: str | None
    tool_calls: tuple[ToolCallSeen, ...] = ()
    source: str = "chat"


@attrs.frozen
class Observed:
    """What a case's turn did, as the isolated store recorded it."""

    turn_id: str
    status: str
    output: str | None = None
    outcome: str | None = None
    error: str | None = None
    latency_seconds: float | None = None
    """From the turn's start to its end (``None``: it never ran)."""
    input_tokens: int = 0
    output_tokens: int = 0
    model_calls: int = 0
    tool_calls: tuple[ToolCallSeen, ...] = ()
    agent: str | None = None
    model: str | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@attrs.frozen
class Verdict:
    """One evaluator's judgement of one case: passed or not, an optional score in
    0..1, and why (shown in the report)."""

    passed: bool
    score: float | None = None
    reason: str = ""


class EvalContext(Protocol):
    """What an evaluator may use while it judges: models, by name."""

    def model(self, spec: str) -> Model:
        """The model named ``spec`` (``"llm/gpt-4o-mini"``, ``"scripted"``), from the
        plugins of the runtime the eval runs in. :raises ModelError:"""
        ...

    @property
    def default_model(self) -> str:
        """``[models] default`` of the eval's configuration."""
        ...


class Evaluator(Protocol):
    """Judges one case: ``evaluate(case, observed, context)`` returns a
    :class:`Verdict` (or an awaitable of one). A raise counts as a failed verdict
    naming the evaluator and the error; it never stops the eval."""

    def evaluate(
        self, case: EvalCase, observed: Observed, context: EvalContext
    ) -> Verdict | Awaitable[Verdict]: ...


EvaluatorFactory = Callable[[Any], Evaluator]
"""Builds an evaluator from the parameters a dataset gives it (``None`` when the
dataset names it without any). :raises ValueError: for parameters it cannot take."""


class RegisterEvaluator(Protocol):
    """``register(name, factory, *, description="")``: offer an evaluator named
    ``name`` (``^[a-z][a-z0-9_-]*$``) built by ``factory(params)``."""

    def __call__(self, name: str, factory: EvaluatorFactory, *, description: str = "") -> None: ...


@attrs.frozen
class EvaluatorUse:
    """An evaluator as a case uses it: its name, its parameters, the built object."""

    name: str
    params: Any
    evaluator: Evaluator = attrs.field(eq=False, repr=False)


@attrs.frozen
class EvalCase:
    """One input to run and what judges its answer.

    ``expected`` (text) and ``schema`` (a JSON Schema) are data the evaluators read
    (``exact``, ``json_schema``, ``judge``); ``origin`` says where the case came from
    (``cases.yaml:12``, ``turn 01J…``).
    """

    id: str
    input: str
    origin: str
    evaluators: tuple[EvaluatorUse, ...] = ()
    expected: str | None = None
    schema: Mapping[str, Any] | None = None
    tags: tuple[str, ...] = ()
    agent: str | None = None
    recorded: RecordedTurn | None = None


@attrs.frozen
class ScoredVerdict:
    """A verdict with the evaluator that gave it."""

    evaluator: str
    passed: bool
    score: float | None = None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "evaluator": self.evaluator,
            "passed": self.passed,
            "score": self.score,
            "reason": self.reason,
        }


@attrs.frozen
class CaseResult:
    """One case's outcome: what its turn did and every verdict."""

    case_id: str
    input: str
    origin: str
    tags: tuple[str, ...]
    status: str
    output: str | None
    latency_seconds: float | None
    tokens: int
    verdicts: tuple[ScoredVerdict, ...]
    turn_id: str | None = None
    recorded_turn: str | None = None

    @property
    def passed(self) -> bool:
        """Every verdict passed (a case without evaluators passes when it completed)."""
        if not self.verdicts:
            return self.status == "completed"
        return all(v.passed for v in self.verdicts)

    def to_json(self) -> dict[str, Any]:
        return {
            "case": self.case_id,
            "input": self.input,
            "origin": self.origin,
            "tags": list(self.tags),
            "status": self.status,
            "passed": self.passed,
            "output": self.output,
            "latency_seconds": self.latency_seconds,
            "tokens": self.tokens,
            "verdicts": [v.to_json() for v in self.verdicts],
            "turn_id": self.turn_id,
            "recorded_turn": self.recorded_turn,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaseResult:
        return cls(
            case_id=str(data["case"]),
            input=str(data.get("input", "")),
            origin=str(data.get("origin", "")),
            tags=tuple(data.get("tags", ())),
            status=str(data.get("status", "")),
            output=data.get("output"),
            latency_seconds=data.get("latency_seconds"),
            tokens=int(data.get("tokens", 0)),
            verdicts=tuple(
                ScoredVerdict(
                    v["evaluator"], bool(v["passed"]), v.get("score"), v.get("reason", "")
                )
                for v in data.get("verdicts", ())
            ),
            turn_id=data.get("turn_id"),
            recorded_turn=data.get("recorded_turn"),
        )
