"""An installed tool is usable at once: its plugin declares an owner, or the
``[agents] unmatched_tools`` rule gives it to the default agent; doctor names the rest."""

from __future__ import annotations

import asyncio

from toolang_core import AgentDefinition, AgentLoad, RegisterTool, Tool, hookimpl
from toolang_core.config import AgentsConfig, ModelsConfig, RuntimeConfig, ToolangConfig
from toolang_core.doctor import DoctorContext, check_agents
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import ScriptedModel, text, tool_call


def lookup(city: str) -> str:
    """The weather in CITY."""
    return f"sunny in {city}"


class WeatherTools:
    """A pip-installed tool plugin: its tool matches no agent's prefix."""

    def __init__(self, owner: str | None) -> None:
        self.owner = owner

    @hookimpl
    def toolang_register_tools(self, register: RegisterTool) -> None:
        register(Tool.from_function(lookup, name="weather_lookup", owner=self.owner))


class Agents:
    """An agent source with the default agent and a forecaster; neither claims weather_."""

    @staticmethod
    @hookimpl
    def toolang_agent_sources() -> object:
        class Source:
            label = "user"
            name = "test-agents"

            def load(self, context: object) -> AgentLoad:
                return AgentLoad(
                    (
                        AgentDefinition(name="assistant", instruction="Help."),
                        AgentDefinition(name="forecaster", instruction="Forecast."),
                    )
                )

        return Source()


def make(tmp_path, model, *, owner=None, unmatched_tools="none"):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
        agents=AgentsConfig(unmatched_tools=unmatched_tools),
    )
    plugins = [("scripted", model.plugin()), ("tools-weather", WeatherTools(owner))]
    return Runtime.with_plugins(config, [*plugins, ("test-agents", Agents())], env={})


def turn_calling_the_tool(runtime, agent):
    inbox = runtime.open_inbox()
    request = NewTurnRequest(source="chat", thread_id="t", input="weather?", agent=agent)
    turn_id = inbox.submit(request).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    results = [s.data["result"] for s in inbox.store.steps(turn_id) if "result" in s.data]
    return inbox.get(turn_id), results


def doctor_lines(runtime):
    ctx = DoctorContext(env={}, config_path=None, config=runtime.config, host=runtime.host)
    return [(c.status, c.summary, c.details) for c in check_agents(ctx)]


def test_the_declared_owner_calls_the_tool_in_a_turn(tmp_path):
    model = ScriptedModel([tool_call("weather_lookup", {"city": "Oslo"}), text("Sunny.")])
    runtime = make(tmp_path, model, owner="forecaster")
    turn, results = turn_calling_the_tool(runtime, "forecaster")
    assert turn.status is TurnStatus.COMPLETED
    assert results[0]["output"] == "sunny in Oslo"
    assert not [line for line in doctor_lines(runtime) if line[0] in ("fail", "warn")]


def test_without_an_owner_the_tool_is_unmatched_and_doctor_names_it_with_the_fix(tmp_path):
    model = ScriptedModel([tool_call("weather_lookup", {"city": "Oslo"}), text("Could not.")])
    runtime = make(tmp_path, model)
    _, results = turn_calling_the_tool(runtime, "assistant")
    assert results[0]["ok"] is False  # the default agent may not use it
    (problem,) = [line for line in doctor_lines(runtime) if line[0] == "fail"]
    assert "weather_lookup (tools-weather)" in problem[1]
    assert "Tool(owner='<agent>')" in problem[2][0]
    assert '[agents] unmatched_tools = "default"' in problem[2][0]


def test_the_unmatched_tools_rule_gives_it_to_the_default_agent(tmp_path):
    model = ScriptedModel([tool_call("weather_lookup", {"city": "Oslo"}), text("Sunny.")])
    runtime = make(tmp_path, model, unmatched_tools="default")
    turn, results = turn_calling_the_tool(runtime, None)
    assert (turn.status, results[0]["output"]) == (TurnStatus.COMPLETED, "sunny in Oslo")
    assert runtime.agents.assignment.owners["weather_lookup"].via == "fallback"


def test_a_declared_owner_that_is_no_agent_is_a_doctor_warning(tmp_path):
    runtime = make(tmp_path, ScriptedModel([]), owner="forecastr")
    (warning,) = [line for line in doctor_lines(runtime) if line[0] == "warn"]
    assert "declare an owner that is not an active agent" in warning[1]
    assert "weather_lookup (plugin tools-weather) names owner 'forecastr'" in warning[2]
