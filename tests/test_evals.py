"""Evals (issue #39, item 2): written cases and recorded turns run through the real
runtime in an isolated home, scored by every kind of evaluator, stored, compared; bad
datasets refused with their file and line; one owner's recorded turns are not
another's to evaluate. The models are scripted (the agent's and the judge's)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from toolang_core import NewTurnRequest, NotThreadOwner, TurnFilter, hookimpl
from toolang_core.config import parse_config
from toolang_core.evals.dataset import DatasetError, load_dataset
from toolang_core.evals.registry import collect_evaluators
from toolang_core.evals.results import (
    EvalRunNotFound,
    Threshold,
    compare_runs,
    list_runs,
    load_run,
    save_run,
    threshold_failures,
)
from toolang_core.evals.runner import EvalOptions
from toolang_core.evals.selection import parse_selection, select_turns
from toolang_core.evals.session import build_cases, evaluate
from toolang_core.runtime import Runtime
from toolang_core.store.errors import TurnNotFound
from toolang_core.testing.models import ScriptedModel, text, tokens, tool_call
from toolang_core.testing.runtimes import SCRIPTED_AGENT_CONFIG, serve_until_idle
from toolang_core.tools.types import Tool

CITIES = ("oslo", "lima", "rome", "kyiv", "pune")


def weather(city: str) -> str:
    """Today's weather in CITY.

    :param city: a city
    """
    return f"sunny in {city}"


class WeatherTool:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        register(Tool.from_function(weather))


def answer(request, *, wrong: str = ""):
    """The agent: ``weather CITY`` calls the tool; ``json N`` answers JSON; anything
    else is echoed (``wrong`` in the input: a wrong answer)."""
    last = request.messages[-1]
    usage = tokens(40, 8)
    if last.role == "tool":
        return text(f"report: {last.content}", usage=usage)
    said = last.content
    if said.startswith("weather "):
        return tool_call("weather", {"city": said.split()[1]}, usage=usage)
    if said.startswith("json "):
        return text(json.dumps({"n": int(said.split()[1])}), usage=usage)
    if wrong and wrong in said:
        return text("I do not know", usage=usage)
    return text(f"echo: {said}", usage=usage)


def verdict(request):
    """The judge: an answer passes unless it says it does not know."""
    graded = request.messages[-1].content.split("Agent's answer:\n", 1)[1].split("\n\n")[0]
    passed = "do not know" not in graded
    return text(json.dumps({"pass": passed, "score": 1.0 if passed else 0.0, "reason": "ok"}))


def make_runtime(tmp_path: Path) -> tuple[Runtime, ScriptedModel]:
    judge = ScriptedModel(verdict)
    plugins = {
        "scripted": ScriptedModel(answer).plugin(),
        "worse": ScriptedModel(lambda r: answer(r, wrong="echo-7")).plugin("worse"),
        "judge": judge.plugin("judge"),
        "weather": WeatherTool(),
    }
    config = parse_config(
        SCRIPTED_AGENT_CONFIG + "[scheduler]\nmax_running = 16\n",
        file=tmp_path / "toolang.toml",
        env={},
    )
    return Runtime.with_plugins(config, plugins.items(), env={}), judge


def record_turns(runtime: Runtime, owner: str, count: int) -> list[str]:
    inbox = runtime.open_inbox()
    try:
        ids = []
        for i in range(count):
            said = f"weather {CITIES[i % 5]}" if i % 2 else f"hello {i}"
            thread = f"chat:{owner}-{i % 7}"
            ids.append(inbox.submit(NewTurnRequest("chat", thread, said, owner=owner)).id)
    finally:
        inbox.store.close()
    serve_until_idle(runtime)
    return ids


WRITTEN_DEFAULTS = """\
evaluators:
  - latency: 30
  - tokens: {max_total: 1000, max_input: 900}
  - judge: {model: judge, rubric: "A direct answer, not a refusal."}
cases:
"""


def written_cases(count: int) -> str:
    """``count`` cases, each kind of evaluator among them; case 7 expects a wrong
    answer (it fails ``exact``)."""
    lines = [WRITTEN_DEFAULTS]
    for i in range(count):
        city = CITIES[i % 5]
        kind = i % 5
        if kind == 0:
            lines.append(
                f"  - {{id: w{i}, input: 'weather {city}', tags: [tools], evaluators: "
                f"[{{tool_call: {{name: weather, params: {{city: {city}}}}}}}, "
                f"{{contains: 'sunny in {city}'}}]}}\n"
            )
        elif kind == 1:
            lines.append(
                f"  - {{id: w{i}, input: 'json {i}', schema: {{type: object, required: [n], "
                f"properties: {{n: {{type: integer}}}}}}, evaluators: [json_schema]}}\n"
            )
        elif kind == 2:
            expected = "nope" if i == 7 else f"echo: echo-{i}"
            lines.append(
                f"  - {{id: w{i}, input: 'echo-{i}', expected: '{expected}', "
                "evaluators: [exact]}\n"
            )
        elif kind == 3:
            lines.append(
                f"  - {{id: w{i}, input: 'echo-{i}', evaluators: [{{regex: '^echo: echo-\\d+$'}}, "
                f"{{tool_call: none}}]}}\n"
            )
        else:
            lines.append(
                f"  - {{id: w{i}, input: 'echo-{i}', evaluators: [{{contains: [echo, '{i}']}}]}}\n"
            )
    return "".join(lines)


def run(runtime: Runtime, cases, **options) -> object:
    return asyncio.run(
        evaluate(runtime.config, runtime.host, cases, EvalOptions(**options), env={})
    )


def test_an_eval_of_50_written_cases_and_50_recorded_turns_uses_every_kind_of_evaluator(
    tmp_path,
):
    runtime, judge = make_runtime(tmp_path)
    recorded_ids = record_turns(runtime, "ada", 50)
    record_turns(runtime, "bob", 3)
    dataset_file = tmp_path / "cases.yaml"
    dataset_file.write_text(written_cases(50))
    registry = collect_evaluators(runtime.hooks)
    dataset = load_dataset(dataset_file, registry)
    store = runtime.open_store()
    try:
        recorded = select_turns(store, parse_selection("status=completed since=1h limit=60"), "ada")
        cases = build_cases(dataset, recorded, registry)
        done = run(runtime, cases, owner="ada")
        save_run(store, done, runtime.redaction)
        kept = store.list_turns(TurnFilter(limit=1000))
    finally:
        store.close()

    assert sorted(r.turn_id for r in recorded) == sorted(recorded_ids)  # ada's only
    summary = done.summary()
    assert summary["cases"] == 100
    assert set(summary["evaluators"]) == {
        "exact",
        "contains",
        "regex",
        "json_schema",
        "tool_call",
        "latency",
        "tokens",
        "judge",
    }
    assert summary["evaluators"]["judge"]["used"] == 100 == len(judge.calls)
    failed = {c.case_id: c for c in done.cases if not c.passed}
    assert list(failed) == ["w7"]
    (wrong,) = [v for v in failed["w7"].verdicts if not v.passed]
    assert wrong.evaluator == "exact"
    assert wrong.reason == "expected 'nope', got 'echo: echo-7'"
    weather_turn = next(c for c in done.cases if c.recorded_turn and "weather" in c.input)
    assert weather_turn.output.startswith("report: ")
    assert {v.evaluator for v in weather_turn.verdicts} >= {"exact", "tool_call"}
    assert all(c.tokens in {48, 96} for c in done.cases)
    # the eval ran in its own home: the real store holds the recorded turns only
    assert len(kept) == 53 and not any(t.source == "eval" for t in kept)
    store = runtime.open_store()
    try:
        assert load_run(store, done.id, "ada").summary() == summary
        with pytest.raises(EvalRunNotFound):
            load_run(store, done.id, "bob")
        assert [r.id for r in list_runs(store, None)] == [done.id]
    finally:
        store.close()
    assert threshold_failures(done, [Threshold.parse("0.99"), Threshold.parse("exact=0.9")]) == []
    assert threshold_failures(done, [Threshold.parse("1"), Threshold.parse("exact=1")]) == [
        "pass_rate: 99.0% passed, threshold 100.0%",
        "exact: 98.3% passed, threshold 100.0%",
    ]


def test_compare_lists_the_regression_first(tmp_path):
    runtime, _ = make_runtime(tmp_path)
    dataset_file = tmp_path / "cases.jsonl"
    dataset_file.write_text(
        "".join(
            json.dumps({"id": f"c{i}", "input": f"echo-{i}", "expected": f"echo: echo-{i}"}) + "\n"
            for i in range(10)
        )
    )
    registry = collect_evaluators(runtime.hooks)
    cases = build_cases(load_dataset(dataset_file, registry), [], registry)
    before = run(runtime, cases)
    after = run(runtime, cases, model="worse")
    changes = compare_runs(before, after)
    assert (changes[0].case_id, changes[0].change, changes[0].evaluators) == (
        "c7",
        "regressed",
        ("exact",),
    )
    assert {c.change for c in changes[1:]} == {"same"}
    assert changes[0].to_json()["after"]["output"] == "I do not know"


def test_one_owner_cannot_evaluate_another_owners_recorded_turns(tmp_path):
    runtime, _ = make_runtime(tmp_path)
    (ada_turn,) = record_turns(runtime, "ada", 1)
    store = runtime.open_store()
    try:
        with pytest.raises(NotThreadOwner, match="may not evaluate another owner's turns"):
            select_turns(store, parse_selection("owner=ada"), "bob")
        with pytest.raises(TurnNotFound, match=f"turn={ada_turn}: no turn request"):
            select_turns(store, parse_selection(f"turn={ada_turn}"), "bob")
        with pytest.raises(NotThreadOwner):
            select_turns(store, parse_selection("thread=chat:ada-0"), "bob")
        assert select_turns(store, parse_selection("since=1h"), "bob") == []
        assert [t.turn_id for t in select_turns(store, parse_selection("owner=ada"), None)] == [
            ada_turn
        ]
    finally:
        store.close()


# -- bad datasets ----------------------------------------------------------------------


@pytest.fixture
def registry(tmp_path):
    runtime, _ = make_runtime(tmp_path)
    return collect_evaluators(runtime.hooks)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "cases.jsonl",
            '{"input": "a"}\n\n{"input": "b"\n',
            "cases.jsonl:3: not a JSON object",
        ),
        (
            "cases.jsonl",
            '{"input": "a"}\n{"input": "b", "evaluators": [{"smell": 1}]}\n',
            "cases.jsonl:2: unknown evaluator 'smell'; known evaluators: contains, exact,",
        ),
        (
            "cases.yaml",
            "- input: a\n- input: b\n  schema: {type: nothing}\n",
            "cases.yaml:2: schema: the JSON Schema does not compile",
        ),
        (
            "cases.yaml",
            "cases:\n  - input: a\n    evaluators:\n      - contains: a\n"
            "      - json_schema: {type: 12}\n",
            "cases.yaml:5: evaluator 'json_schema': the JSON Schema does not compile",
        ),
        (
            "cases.yaml",
            "- input: a\n  evaluators:\n    - regex: '(unclosed'\n",
            "cases.yaml:3: evaluator 'regex': the regular expression '(unclosed' does not compile",
        ),
        ("cases.yaml", "- input: a\n- text: b\n", "cases.yaml:2: unknown key(s) ['text']"),
    ],
    ids=["not-json", "unknown-evaluator", "schema", "evaluator-schema", "regex", "unknown-key"],
)
def test_a_bad_dataset_is_refused_with_its_file_and_line(
    tmp_path, registry, name, content, message
):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DatasetError) as refused:
        load_dataset(path, registry)
    assert str(refused.value).startswith(str(path.parent) + "/" + message), str(refused.value)


@pytest.mark.parametrize("score", ["NaN", "Infinity", "1e400", "1" + "0" * 400])
def test_a_judges_score_that_is_not_a_finite_number_is_no_score(score):
    """``json`` reads these; no store keeps them (a run's results are stored)."""
    from toolang_core.evals.judge import parse_verdict

    verdict = parse_verdict(f'{{"pass": true, "score": {score}, "reason": "ok"}}', 0.5, "j")
    assert (verdict.passed, verdict.score, verdict.reason) == (True, None, "ok")
