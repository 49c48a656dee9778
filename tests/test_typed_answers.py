"""Typed answers through a real runtime with a scripted model: the final answer is
parsed as JSON and validated against the agent's or the request's schema; an invalid
one goes back to the model with the errors until ``output_retries`` is used up."""

from __future__ import annotations

import asyncio
import json

import attrs
import pytest

from toolang_core import AgentDefinition, parse_agent_md
from toolang_core.config import ToolangConfig
from toolang_core.config.model import AgentsConfig, ModelsConfig, RuntimeConfig
from toolang_core.inbox.request_checks import InvalidRequest
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.agents import AgentsPlugin
from toolang_core.testing.models import ScriptedModel, text, tool_call
from toolang_core.turn import output, timeline

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
    "additionalProperties": False,
}
VALID = '{"city": "Oslo", "celsius": 4.5}'


class Tools:
    from toolang_core import hookimpl

    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        from toolang_core import Tool

        def weather(city: str) -> str:
            """The weather in a city.

            :param city: the city
            """
            return f"{city}: 4.5 C"

        register(Tool.from_function(weather, blocking=False))


def make(tmp_path, model, *agents, **agent_config):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
        agents=AgentsConfig(create_default=True, **agent_config),
    )
    plugins = [("scripted", model.plugin()), ("tools", Tools())]
    if agents:
        plugins.append(("agents", AgentsPlugin(*agents)))
    return Runtime.with_plugins(config, plugins, env={})


def run(runtime, *, schema=None, agent=None):
    inbox = runtime.open_inbox()
    meta = {output.OUTPUT_SCHEMA: schema} if schema is not None else {}
    turn_id = inbox.submit(
        NewTurnRequest(source="chat", thread_id="cli:t", input="weather?", agent=agent, meta=meta)
    ).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    try:
        return inbox.get(turn_id), inbox.store.steps(turn_id)
    finally:
        inbox.store.close()


def checks(steps):
    return [
        (s.data["attempt"], s.data["valid"], s.status) for s in steps if s.kind == "output_check"
    ]


def test_an_invalid_json_answer_is_sent_back_and_the_second_attempt_completes(tmp_path):
    model = ScriptedModel([text("It is 4.5 degrees in Oslo."), text(VALID)])
    turn, steps = run(make(tmp_path, model), schema=SCHEMA)
    assert turn.status is TurnStatus.COMPLETED
    assert json.loads(turn.output) == {"city": "Oslo", "celsius": 4.5}
    assert [s.kind for s in steps].count("model_call") == 2
    assert checks(steps) == [(1, False, "failed"), (2, True, "completed")]
    (rejected,) = [s for s in steps if s.kind == "output_check" and not s.data["valid"]]
    assert "not JSON" in rejected.error
    # the model read its own answer and what was wrong with it
    retry = model.calls[1].messages
    assert retry[-2].role == "assistant" and retry[-2].content == "It is 4.5 degrees in Oslo."
    assert retry[-1].role == "user" and "not JSON" in retry[-1].content
    model.assert_complete()


def test_every_call_carries_the_schema_and_the_prompt_states_it(tmp_path):
    model = ScriptedModel([text(VALID)])
    run(make(tmp_path, model), schema=SCHEMA)
    (request,) = model.calls
    assert request.output_schema == SCHEMA
    assert json.dumps(SCHEMA, sort_keys=True) in request.messages[0].content


def test_a_turn_without_a_schema_sends_none_and_keeps_its_text(tmp_path):
    model = ScriptedModel([text("plain words")])
    turn, steps = run(make(tmp_path, model))
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "plain words")
    assert model.calls[0].output_schema is None
    assert "JSON Schema" not in model.calls[0].messages[0].content
    assert checks(steps) == []


def test_an_answer_that_never_matches_fails_invalid_output_after_one_plus_retries_calls(tmp_path):
    model = ScriptedModel([text('{"city": "Oslo"}')] * 3)
    turn, steps = run(make(tmp_path, model), schema=SCHEMA)
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "invalid_output")
    assert len(model.calls) == 3  # 1 + output_retries (default 2)
    assert "the output schema of the request after 3 attempts" in turn.error
    assert "attempt 3: answer must contain ['celsius'] properties" in turn.error
    assert checks(steps) == [(1, False, "failed"), (2, False, "failed"), (3, False, "failed")]


def test_output_retries_comes_from_agents_config(tmp_path):
    model = ScriptedModel([text("no")])
    turn, _ = run(make(tmp_path, model, output_retries=0), schema=SCHEMA)
    assert (turn.status, turn.outcome, len(model.calls)) == (TurnStatus.FAILED, "invalid_output", 1)


def test_an_agents_own_schema_and_retries_apply_to_its_turns(tmp_path):
    agent = AgentDefinition(name="weather", output_schema=SCHEMA, output_retries=1)
    model = ScriptedModel([text("[]"), text("[1]")])
    turn, _ = run(make(tmp_path, model, agent), agent="weather")
    assert (turn.status, turn.outcome, len(model.calls)) == (TurnStatus.FAILED, "invalid_output", 2)
    assert "output schema of agent 'weather' after 2 attempts" in turn.error
    assert model.calls[0].output_schema == SCHEMA


def test_the_requests_schema_wins_over_the_agents(tmp_path):
    agent = AgentDefinition(name="weather", output_schema=SCHEMA)
    model = ScriptedModel([text('["a", "b"]')])
    wanted = {"type": "array", "items": {"type": "string"}}
    turn, _ = run(make(tmp_path, model, agent), agent="weather", schema=wanted)
    assert (turn.status, json.loads(turn.output)) == (TurnStatus.COMPLETED, ["a", "b"])
    assert model.calls[0].output_schema == wanted


def test_a_fenced_json_answer_is_accepted_and_stored_bare(tmp_path):
    model = ScriptedModel([text(f"```json\n{VALID}\n```")])
    turn, _ = run(make(tmp_path, model), schema=SCHEMA)
    assert turn.output == json.dumps({"city": "Oslo", "celsius": 4.5})


def test_tool_calls_before_a_typed_answer_run_once(tmp_path):
    model = ScriptedModel(
        [tool_call("weather", {"city": "Oslo"}, call_id="w1"), text("4.5 in Oslo"), text(VALID)]
    )
    turn, steps = run(make(tmp_path, model), schema=SCHEMA)
    assert turn.status is TurnStatus.COMPLETED
    assert [s.kind for s in steps].count("tool_call") == 1
    assert checks(steps) == [(1, False, "failed"), (2, True, "completed")]


def test_the_trace_shows_each_attempt_and_its_errors(tmp_path):
    model = ScriptedModel([text('{"city": 3, "celsius": 1}'), text(VALID)])
    runtime = make(tmp_path, model)
    turn, steps = run(runtime, schema=SCHEMA)
    lines = "\n".join(timeline.timeline(turn, steps))
    assert "answer 1 of 3 rejected: answer.city must be string" in lines
    assert "answer 2 of 3 matches the schema of the request" in lines


def test_a_request_schema_that_is_not_json_schema_is_refused_at_the_door(tmp_path):
    runtime = make(tmp_path, ScriptedModel([]))
    inbox = runtime.open_inbox()
    try:
        for bad, expected in [
            ({"type": "strng"}, "not a valid JSON Schema"),
            ("a string", "expected a JSON Schema object, got str"),
            ({"properties": 5}, "not a valid JSON Schema"),
        ]:
            with pytest.raises(InvalidRequest, match=r"meta\.output_schema: ") as caught:
                inbox.submit(
                    NewTurnRequest(
                        source="chat", thread_id="cli:t", input="x", meta={"output_schema": bad}
                    )
                )
            assert expected in str(caught.value)
        assert inbox.store.list_turns() == []  # nothing stored
    finally:
        inbox.store.close()


def test_output_value_is_the_json_value_of_a_typed_answer_only(tmp_path):
    model = ScriptedModel([text(VALID), text("words")])
    runtime = make(tmp_path, model, AgentDefinition(name="weather", output_schema=SCHEMA))
    typed, _ = run(runtime, schema=SCHEMA)
    plain, _ = run(runtime)
    assert output.output_value(typed) == {"city": "Oslo", "celsius": 4.5}
    assert output.output_value(plain) == "words"
    by_agent = attrs.evolve(typed, meta={}, agent="weather", output="[1]")
    assert output.output_value(by_agent) == "[1]"  # without the registry: as stored
    assert output.output_value(by_agent, runtime.agents) == [1]


# -- AGENT.md ------------------------------------------------------------------------------


def agent_md(front: str) -> str:
    return f"---\nname: weather\n{front}---\nYou report the weather.\n"


def test_agent_md_takes_an_inline_schema_and_output_retries(tmp_path):
    origin = str(tmp_path / "weather" / "AGENT.md")
    text_ = agent_md("output_retries: 4\noutput_schema:\n  type: object\n  required: [city]\n")
    (definition,) = parse_agent_md(text_, origin=origin, source="user").definitions
    assert definition.output_schema == {"type": "object", "required": ["city"]}
    assert definition.output_retries == 4


def test_agent_md_takes_a_schema_file_relative_to_itself(tmp_path):
    folder = tmp_path / "weather"
    (folder / "schemas").mkdir(parents=True)
    (folder / "schemas" / "report.json").write_text(json.dumps(SCHEMA))
    load = parse_agent_md(
        agent_md("output_schema: schemas/report.json\n"),
        origin=str(folder / "AGENT.md"),
        source="user",
    )
    (definition,) = load.definitions
    assert definition.output_schema == SCHEMA


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        (
            "output_schema: missing.json\n",
            "output_schema: schema file '{dir}/missing.json' does not exist",
        ),
        (
            "output_schema: broken.json\n",
            "output_schema: schema file '{dir}/broken.json' is not JSON",
        ),
        ("output_schema:\n  type: strng\n", "output_schema: not a valid JSON Schema"),
        ("output_schema: 5\n", "output_schema: expected a JSON Schema (a mapping) or the path"),
        ("output_retries: -1\n", "output_retries must be an integer of at least 0, got -1"),
    ],
)
def test_a_bad_output_schema_keeps_the_agent_out_naming_file_line_and_key(
    tmp_path, front, expected
):
    (tmp_path / "broken.json").write_text("{nope")
    origin = str(tmp_path / "AGENT.md")
    load = parse_agent_md(agent_md(front), origin=origin, source="user")
    assert load.definitions == ()
    (problem,) = load.diagnostics
    assert problem.level == "error"
    assert str(problem).startswith(f"{origin}:3: ")
    assert expected.format(dir=tmp_path) in problem.message


def test_a_bad_schema_that_bypassed_the_door_fails_the_turn_cleanly(tmp_path):
    import time

    from toolang_core.store.types import SubmitRules

    model = ScriptedModel([text("{}")])
    runtime = make(tmp_path, model)
    store = runtime.open_store()
    turn_id = store.submit(  # a raw store write: no inbox, no door's check
        NewTurnRequest(
            source="chat", thread_id="cli:t", input="x", meta={"output_schema": {"type": "strng"}}
        ),
        SubmitRules("chat", 10),
        now=time.time(),
    ).id
    store.close()
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    inbox = runtime.open_inbox()
    try:
        turn = inbox.get(turn_id)
    finally:
        inbox.store.close()
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "agent_error")
    assert "the output schema of the request is not a valid JSON Schema" in turn.error
