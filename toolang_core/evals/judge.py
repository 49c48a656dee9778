"""The ``judge`` evaluator: a model grades an answer against a rubric (LLM-as-judge).

Any model toolang can resolve judges — ``llm/<id>`` through toolang-model-llm, the
testing kit's scripted model, ``demo`` — named by the evaluator's ``model`` (default:
``[models] default``). The judge is told the case's input, expected output (if any),
the answer and the rubric, and must answer a JSON object ``{"pass": true|false,
"score": 0..1, "reason": "..."}`` (a bare ``PASS``/``FAIL`` first word is accepted
too). An answer that is neither fails the case and says what came back.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final

import attrs

from toolang_core.evals.types import EvalCase, EvalContext, Observed, Verdict

INSTRUCTION: Final = (
    "You grade an AI agent's answer. Read the input, the expected answer if one is "
    "given, the agent's answer and the rubric. Reply with one JSON object and nothing "
    'else: {"pass": true or false, "score": a number from 0 to 1, "reason": one short '
    "sentence}."
)
_OBJECT: Final = re.compile(r"\{.*\}", re.S)
_WORD: Final = re.compile(r"^\W*(PASS|FAIL)\b", re.I)


@attrs.frozen
class Judge:
    rubric: str
    model: str | None = None
    pass_score: float = 0.5

    async def evaluate(self, case: EvalCase, observed: Observed, context: EvalContext) -> Verdict:
        from toolang_core.models.types import Message, ModelRequest

        spec = self.model or context.default_model
        model = context.model(spec)
        parts = [f"Input:\n{case.input}"]
        if case.expected is not None:
            parts.append(f"Expected answer:\n{case.expected}")
        parts.append(
            f"Agent's answer:\n{observed.output or '(no answer: ' + observed.status + ')'}"
        )
        parts.append(f"Rubric:\n{self.rubric}")
        request = ModelRequest(
            messages=(
                Message(role="system", content=INSTRUCTION),
                Message(role="user", content="\n\n".join(parts)),
            ),
            model_id=spec.partition("/")[2] or None,
        )
        response = await model.complete(request)
        return parse_verdict(response.text, self.pass_score, spec)


def _finite(score: object) -> float | None:
    """A judge's score as a finite float, else none (``json`` reads ``NaN`` and
    ``1e400``, which no store takes, and ints too large for a float)."""
    if not isinstance(score, int | float):
        return None
    try:
        value = float(score)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def parse_verdict(text: str, pass_score: float, spec: str) -> Verdict:
    """The judge's answer as a verdict; one it cannot read fails, quoting it."""
    found = _OBJECT.search(text)
    if found is not None:
        try:
            data = json.loads(found.group(0))
        except ValueError:
            data = None
        if isinstance(data, Mapping) and ("pass" in data or "score" in data):
            score = data.get("score")
            score = _finite(score)
            passed = data.get("pass")
            if not isinstance(passed, bool):
                passed = score is not None and score >= pass_score
            return Verdict(passed, score, str(data.get("reason", ""))[:300])
    word = _WORD.match(text)
    if word is not None:
        passed = word.group(1).upper() == "PASS"
        return Verdict(passed, 1.0 if passed else 0.0, text[word.end() :].strip(" :-\n")[:300])
    shown = " ".join(text.split())[:120]
    return Verdict(False, None, f"the judge ({spec}) gave no verdict: {shown!r}")


def judge_from_params(params: Any) -> Judge:
    """``judge: "RUBRIC"`` or ``judge: {rubric, model, pass_score}``.
    :raises ValueError:"""
    if isinstance(params, str):
        params = {"rubric": params}
    if not isinstance(params, Mapping):
        raise ValueError(f"expected a rubric or {{rubric, model, pass_score}}, found {params!r}")
    unknown = set(params) - {"rubric", "model", "pass_score"}
    if unknown:
        raise ValueError(f"unknown key(s) {sorted(unknown)}; expected rubric, model, pass_score")
    rubric, model = params.get("rubric"), params.get("model")
    if not isinstance(rubric, str) or not rubric.strip():
        raise ValueError("rubric: expected a text saying what a good answer is")
    if model is not None and not isinstance(model, str):
        raise ValueError(f"model: expected a model name, found {model!r}")
    pass_score = params.get("pass_score", 0.5)
    if isinstance(pass_score, bool) or not isinstance(pass_score, int | float):
        raise ValueError(f"pass_score: expected a number from 0 to 1, found {pass_score!r}")
    return Judge(rubric, model, float(pass_score))
