"""Evaluating agents on written cases and recorded turns (``toolang eval``).

See docs/evals.md. The parts: :mod:`.dataset` (reading cases), :mod:`.registry` (the
evaluators plugins offer), :mod:`.builtin` and :mod:`.judge` (the built-in ones),
:mod:`.selection` (recorded turns, under the owner rules), :mod:`.runner` (running
cases in an isolated home; the replay seam), :mod:`.results` (summary, thresholds,
storage, comparison), :mod:`.session` (one eval, start to end).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    # Imported on first use, not with the package: every plugin host registers the
    # built-in ``evaluators`` plugin (:mod:`.plugin`, next door); only ``toolang eval``
    # needs the types.
    if name in __all__:
        from toolang_core.evals import types

        return getattr(types, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
