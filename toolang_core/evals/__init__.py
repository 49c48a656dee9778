"""Evaluating agents on written cases and recorded turns (``toolang eval``).

See docs/evals.md. The parts: :mod:`.dataset` (reading cases), :mod:`.registry` (the
evaluators plugins offer), :mod:`.builtin` and :mod:`.judge` (the built-in ones),
:mod:`.selection` (recorded turns, under the owner rules), :mod:`.runner` (running
cases in an isolated home; the replay seam), :mod:`.results` (summary, thresholds,
storage, comparison), :mod:`.session` (one eval, start to end).
"""

from __future__ import annotations

from toolang_core.evals.types import (
    CaseResult,
    EvalCase,
    EvalContext,
    Evaluator,
    EvaluatorFactory,
    Observed,
    RecordedTurn,
    RegisterEvaluator,
    ToolCallSeen,
    Verdict,
)

__all__ = [
    "CaseResult",
    "EvalCase",
    "EvalContext",
    "Evaluator",
    "EvaluatorFactory",
    "Observed",
    "RecordedTurn",
    "RegisterEvaluator",
    "ToolCallSeen",
    "Verdict",
]
