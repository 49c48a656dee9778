"""The built-in evaluators (registered by the built-in plugin ``evaluators``,
:mod:`.plugin`): exact, contains, regex, json_schema, tool_call, latency, tokens and
judge.

Each factory checks its parameters while the dataset is read (a regex that does not
compile, a schema that does not compile, a budget that is not a number are refused
then, with the dataset's file and line), so a run never starts with a broken case.
Imported when the evaluators are registered (``toolang eval``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from toolang_core.evals.types import EvalCase, EvalContext, Observed, ToolCallSeen, Verdict

if TYPE_CHECKING:
    import re


def _text(params: Any, what: str) -> str:
    if not isinstance(params, str):
        raise ValueError(f"expected {what} (a string), found {params!r}")
    return params


def _number(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"{key}: expected a number >= 0, found {value!r}")
    return float(value)


def _clip(value: str | None, width: int = 60) -> str:
    text = " ".join((value or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


@attrs.frozen
class Exact:
    """The output equals the expected text (``exact: "Paris"``, or ``exact:`` alone
    for the case's ``expected``), surrounding whitespace ignored."""

    value: str | None

    def evaluate(self, case: EvalCase, observed: Observed, context: EvalContext) -> Verdict:
        wanted = self.value if self.value is not None else case.expected
        if wanted is None:
            return Verdict(False, reason="no expected output (give `expected:` or `exact: TEXT`)")
        got = (observed.output or "").strip()
        if got == wanted.strip():
            return Verdict(True, 1.0)
        return Verdict(False, 0.0, f"expected {_clip(wanted)!r}, got {_clip(got)!r}")


@attrs.frozen
class Contains:
    """Every given text occurs in the output (``contains: "Paris"`` or a list)."""

    needles: tuple[str, ...]

    def evaluate(self, case: EvalCase, observed: Observed, context: EvalContext) -> Verdict:
        output = observed.output or ""
        missing = [n for n in self.needles if n not in output]
        found = len(self.needles) - len(missing)
        score = found / len(self.needles)
        if not missing:
            return Verdict(True, score)
        return Verdict(False, score, f"missing {', '.join(repr(_clip(m, 30)) for m in missing)}")


@attrs.frozen
class Regex:
    """The output matches a regular expression (``re.search``)."""

    pattern: re.Pattern[str]

    def evaluate(self, case: EvalCase, observed: Observed, context: EvalContext) -> Verdict:
        if self.pattern.search(observed.output or ""):
            return Verdict(True, 1.0)
        return Verdict(False, 0.0, f"no match for /{self.pattern.pattern}/")


@attrs.frozen
class JsonSchema:
    """The output is JSON matching a JSON Schema (``json_schema: {...}``, or
    ``json_schema:`` alone for the case's ``schema``)."""

    validate: Any  # the compiled validator, or None: the case's schema
    schema: Mapping[str, Any] | None

    def evaluate(self, case: EvalCase, observed: Observed, context: EvalContext) -> Verdict:
        validate = self.validate
        if validate is None:
            if case.schema is None:
                return Verdict(False, reason="no schema (give `schema:` or `json_schema: {...}`)")
            validate = compile_schema(case.schema)
        try:
            value = json.loads(observed.output or "")
        except ValueError as exc:
            return Verdict(False, 0.0, f"the output is not JSON: {exc}")
        from fastjsonschema import JsonSchemaValueException

        try:
            validate(value)
        except JsonSchemaValueException as exc:
            return Verdict(False, 0.0, f"does not match the schema: {exc.message}")
        return Verdict(True, 1.0)


def compile_schema(schema: Any) -> Any:
    """A validator for JSON Schema ``schema``. :raises ValueError: when it does not
    compile, saying why."""
    import fastjsonschema

    if not isinstance(schema, Mapping):
        raise ValueError(f"expected a JSON Schema (a mapping), found {schema!r}")
    try:
        return fastjsonschema.compile(dict(schema), use_default=False)
    except fastjsonschema.JsonSchemaDefinitionException as exc:
        raise ValueError(f"the JSON Schema does not compile: {exc}") from None
    except Exception as exc:  # fastjsonschema raises plain errors for some bad schemas
        raise ValueError(f"the JSON Schema does not compile: {exc}") from None


@attrs.frozen
class ExpectedCall:
    name: str
    params: Mapping[str, Any] = attrs.field(factory=dict)

    def met_by(self, call: ToolCallSeen) -> bool:
        """``call`` is of this tool with (at least) these parameters."""
        return call.name == self.name and all(
            k in call.params and call.params[k] == v for k, v in self.params.items()
        )

    def show(self) -> str:
        return f"{self.name}({json.dumps(dict(self.params), sort_keys=True)})"


@attrs.frozen
class ToolCalls:
    """The turn made each expected tool call (``tool_call: {name: fs_read, params:
    {path: a}}``, a list of them, ``none`` for no call at all, or ``recorded`` for the
    calls of the recorded turn a case was drawn from). Given parameters must be equal;
    others the call has are ignored."""

    expected: tuple[ExpectedCall, ...] | None  # None: the recorded turn's
    none: bool = False

    def evaluate(self, case: EvalCase, observed: Observed, context: EvalContext) -> Verdict:
        made = observed.tool_calls
        if self.none:
            if not made:
                return Verdict(True, 1.0)
            return Verdict(False, 0.0, f"expected no tool call, got {_names(made)}")
        expected = self.expected
        if expected is None:
            if case.recorded is None:
                return Verdict(False, reason="`tool_call: recorded` needs a recorded turn")
            expected = tuple(ExpectedCall(c.name, c.params) for c in case.recorded.tool_calls)
            if not expected:
                return ToolCalls((), none=True).evaluate(case, observed, context)
        missing = [e for e in expected if not any(e.met_by(c) for c in made)]
        score = (len(expected) - len(missing)) / len(expected) if expected else 1.0
        if not missing:
            return Verdict(True, score)
        return Verdict(
            False,
            score,
            f"no call {', '.join(m.show() for m in missing)}; made {_names(made) or 'none'}",
        )


def _names(calls: Sequence[ToolCallSeen]) -> str:
    return ", ".join(f"{c.name}({json.dumps(dict(c.params), sort_keys=True)})" for c in calls)


def _expected_call(raw: Any) -> ExpectedCall:
    if isinstance(raw, str):
        return ExpectedCall(raw)
    if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str):
        raise ValueError(f"expected {{name: TOOL, params: {{...}}}}, found {raw!r}")
    unknown = set(raw) - {"name", "params"}
    if unknown:
        raise ValueError(f"unknown key(s) {sorted(unknown)}; expected name, params")
    params = raw.get("params") or {}
    if not isinstance(params, Mapping):
        raise ValueError(f"params: expected a mapping, found {params!r}")
    return ExpectedCall(raw["name"], dict(params))


@attrs.frozen
class Latency:
    """The turn took at most ``max_seconds`` from start to end (``latency: 2.5``)."""

    max_seconds: float

    def evaluate(self, case: EvalCase, observed: Observed, context: EvalContext) -> Verdict:
        took = observed.latency_seconds
        if took is None:
            return Verdict(False, reason=f"the turn never ran ({observed.status})")
        if took <= self.max_seconds:
            return Verdict(True, 1.0, f"{took:.3f} s")
        return Verdict(False, 0.0, f"took {took:.3f} s, budget {self.max_seconds:g} s")


@attrs.frozen
class Tokens:
    """The turn's model calls used at most so many tokens (``tokens: 2000`` for input
    plus output, or ``{max_total, max_input, max_output}``)."""

    max_total: float | None = None
    max_input: float | None = None
    max_output: float | None = None

    def evaluate(self, case: EvalCase, observed: Observed, context: EvalContext) -> Verdict:
        over = [
            f"{name} {used} > {limit:g}"
            for name, used, limit in (
                ("total", observed.total_tokens, self.max_total),
                ("input", observed.input_tokens, self.max_input),
                ("output", observed.output_tokens, self.max_output),
            )
            if limit is not None and used > limit
        ]
        if not over:
            return Verdict(True, 1.0, f"{observed.total_tokens} tokens")
        return Verdict(False, 0.0, "; ".join(over))


def _tokens(params: Any) -> Tokens:
    if not isinstance(params, Mapping):
        return Tokens(max_total=_number(params, "tokens"))
    unknown = set(params) - {"max_total", "max_input", "max_output"}
    if unknown or not params:
        raise ValueError(
            f"unknown key(s) {sorted(unknown)}; expected max_total, max_input, max_output"
        )
    return Tokens(**{k: _number(v, k) for k, v in params.items()})


def _latency(params: Any) -> Latency:
    if isinstance(params, Mapping):
        if set(params) != {"max_seconds"}:
            raise ValueError(f"expected {{max_seconds: N}}, found {dict(params)!r}")
        params = params["max_seconds"]
    return Latency(_number(params, "max_seconds"))


def _regex(params: Any) -> Regex:
    import re

    try:
        return Regex(re.compile(_text(params, "a regular expression")))
    except re.error as exc:
        raise ValueError(f"the regular expression {params!r} does not compile: {exc}") from None


def _contains(params: Any) -> Contains:
    needles = [params] if isinstance(params, str) else params
    if not isinstance(needles, list) or not needles or not all(isinstance(n, str) for n in needles):
        raise ValueError(f"expected a text or a list of texts, found {params!r}")
    return Contains(tuple(needles))


def _exact(params: Any) -> Exact:
    return Exact(None if params in (None, True) else _text(params, "the expected output"))


def _json_schema(params: Any) -> JsonSchema:
    if params in (None, True):
        return JsonSchema(None, None)
    return JsonSchema(compile_schema(params), dict(params))


def _tool_call(params: Any) -> ToolCalls:
    if params == "recorded":
        return ToolCalls(None)
    if params == "none":
        return ToolCalls((), none=True)
    raw = params if isinstance(params, list) else [params]
    if not raw:
        raise ValueError("expected at least one call, `none` or `recorded`")
    return ToolCalls(tuple(_expected_call(r) for r in raw))


def _judge(params: Any) -> Any:
    from toolang_core.evals.judge import judge_from_params

    return judge_from_params(params)


BUILTIN: dict[str, tuple[Any, str]] = {
    "exact": (_exact, "the output equals the expected text"),
    "contains": (_contains, "the output contains each given text"),
    "regex": (_regex, "the output matches a regular expression"),
    "json_schema": (_json_schema, "the output is JSON matching a JSON Schema"),
    "tool_call": (_tool_call, "the turn called a tool with given parameters"),
    "latency": (_latency, "the turn took at most max_seconds"),
    "tokens": (_tokens, "the turn used at most so many tokens"),
    "judge": (_judge, "a model grades the answer against a rubric (LLM-as-judge)"),
}
