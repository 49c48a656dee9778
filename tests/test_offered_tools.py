"""Tools a plugin offers while a runtime serves (``toolang_offer_tools``, issue #34).

The offering plugin reads its own settings from the runtime, its tools go through the
registered tools' name rules (a clash refuses the newcomer naming both plugins;
``[tools.providers]`` honoured), and it may add and withdraw tools while a turn is in
flight: the turn keeps the tool list it started with and a call to a withdrawn tool
fails naming the plugin. Real distributions on a ``sys.path`` entry, real runtimes,
a scripted model.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from toolang_core import OfferClosed, Tool
from toolang_core.builtins import builtin_plugins
from toolang_core.config import load_config
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest
from toolang_core.testing.models import ScriptedModel, text, tool_call

OFFERER = """
import asyncio
import threading

import attrs

from toolang_core import Tool, hookimpl


@attrs.frozen
class OffererSettings:
    word: str = "plain"


@hookimpl
def toolang_register_settings(register):
    register(OffererSettings)


@hookimpl
def toolang_offer_tools(runtime, tools):
    runtime.plugin_state("offerer", list).append(tools)
    word = runtime.settings_for("offerer", OffererSettings).word

    def offerer_echo(text: str) -> str:
        '''Echo TEXT with the configured word.'''
        return word + ": " + text

    def offerer_ping() -> str:
        '''Answer pong.'''
        return "pong"

    gates = runtime.plugin_state("offerer-gates", dict)

    async def offerer_wait() -> str:
        '''Wait until the test lets the turn go on.'''
        gates["arrived"].set()
        await asyncio.to_thread(gates["go"].wait)
        return "went on"

    tools.add(Tool.from_function(offerer_echo, owner="assistant"))
    tools.add(Tool.from_function(offerer_ping, owner="assistant"))
    tools.add(Tool.from_function(offerer_wait, owner="assistant"))
"""

WEATHER = """
from toolang_core import Tool, hookimpl

def weather_lookup(city: str) -> str:
    '''The weather in CITY.'''
    return "registered: sunny in " + city

@hookimpl
def toolang_register_tools(register):
    register(Tool.from_function(weather_lookup, owner="assistant"))
"""

LATE_WEATHER = """
from toolang_core import Tool, ToolClash, hookimpl

def weather_lookup(city: str) -> str:
    '''The offered weather in CITY.'''
    return "offered: " + city

def stock_price(symbol: str) -> str:
    '''The price of SYMBOL.'''
    return "1"

@hookimpl
def toolang_offer_tools(runtime, tools):
    refused = runtime.plugin_state("late-weather", list)
    for function in (weather_lookup, stock_price):
        try:
            tools.add(Tool.from_function(function, owner="assistant"))
        except ToolClash as exc:
            refused.append(str(exc))
"""

LOADED = "offerer,tools-weather,late-weather"


@pytest.fixture
def installed(toolang_distribution):
    toolang_distribution(
        "toolang-offerer",
        "2.0",
        entry_points={"toolang": {"offerer": "tl_offerer"}},
        modules={"tl_offerer": OFFERER},
    )
    toolang_distribution(
        "toolang-tools-weather",
        "1.0",
        entry_points={"toolang": {"tools-weather": "tl_weather"}},
        modules={"tl_weather": WEATHER},
    )
    toolang_distribution(
        "toolang-late-weather",
        "3.0",
        entry_points={"toolang": {"late-weather": "tl_late_weather"}},
        modules={"tl_late_weather": LATE_WEATHER},
    )


def runtime_with(tmp_path, config_text: str, model: ScriptedModel) -> Runtime:
    path = tmp_path / "toolang.toml"
    path.write_text('[models]\ndefault = "scripted"\n' + config_text, encoding="utf-8")
    return Runtime.from_config(
        load_config(path, env={}),
        env={"TOOLANG_LOAD_PLUGINS": LOADED},
        builtins=[*builtin_plugins(), ("scripted", model.plugin())],
    )


def results(runtime: Runtime, *inputs: str, during=None) -> list[dict]:
    """Serve ``inputs`` (one turn each, in order) until idle; every tool result."""
    inbox = runtime.open_inbox()
    ids = [inbox.submit(NewTurnRequest(source="chat", thread_id="t", input=i)).id for i in inputs]

    async def serve() -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
            if during is not None:
                group.create_task(asyncio.to_thread(during))

    asyncio.run(serve())
    return [s.data["result"] for t in ids for s in inbox.store.steps(t) if "result" in s.data]


def offer_of(runtime: Runtime):
    (offer,) = runtime.plugin_state("offerer", list)
    return offer


def test_an_offered_tool_reads_the_runtimes_settings_and_the_agent_calls_it(installed, tmp_path):
    model = ScriptedModel([tool_call("offerer_echo", {"text": "hi"}), text("Done.")])
    runtime = runtime_with(tmp_path, '[plugins.offerer]\nword = "configured"\n', model)
    (result,) = results(runtime, "echo")
    assert result["output"] == "configured: hi"
    assert "offerer_echo" in {spec.name for spec in model.calls[0].tools}


def test_offered_tools_are_withdrawn_when_the_run_ends_and_the_offer_closes(installed, tmp_path):
    runtime = runtime_with(tmp_path, "", ScriptedModel([text("Hello.")]))
    assert "offerer_echo" not in runtime.host.components.tools  # not before serving
    results(runtime, "hello")
    assert "offerer_echo" not in runtime.host.components.tools
    assert "weather_lookup" in runtime.host.components.tools  # registered tools stay
    with pytest.raises(OfferClosed, match="'offerer'"):
        offer_of(runtime).add(Tool.from_function(_spare))


def _spare() -> str:
    """A tool offered after the run ended."""
    return "never"


def test_an_offer_that_clashes_with_a_registered_tool_is_refused_naming_both(installed, tmp_path):
    model = ScriptedModel([tool_call("weather_lookup", {"city": "Oslo"}), text("ok")])
    runtime = runtime_with(tmp_path, "", model)
    (weather,) = results(runtime, "weather")
    assert weather["output"] == "registered: sunny in Oslo"  # never silently shadowed
    (message,) = [m for m in runtime.plugin_state("late-weather", list) if "weather_" in m]
    assert message.startswith(
        "tool 'weather_lookup' offered by plugin 'late-weather' (distribution "
        "toolang-late-weather 3.0) is refused: plugin 'tools-weather' (distribution "
        "toolang-tools-weather 1.0) already has it"
    )
    assert "[tools.providers] weather_lookup" in message


def test_tools_providers_gives_a_registered_name_to_the_offering_plugin(installed, tmp_path):
    model = ScriptedModel([tool_call("weather_lookup", {"city": "Oslo"}), text("ok")])
    config = '[tools.providers]\nweather_lookup = "toolang-late-weather"\n'
    runtime = runtime_with(tmp_path, config, model)
    # no "[tools.providers] entry matches nothing" warning: the plugin may offer it
    assert not [w for w in runtime.host.warnings if "weather_lookup" in w]
    assert "weather_lookup" not in runtime.host.components.tools  # withheld at collection
    (result,) = results(runtime, "weather")
    assert result["output"] == "offered: Oslo"
    assert runtime.plugin_state("late-weather", list) == []


def test_tools_providers_refuses_an_offer_of_a_name_it_gives_to_another_plugin(installed, tmp_path):
    config = '[tools.providers]\nstock_price = "tools-weather"\n'
    runtime = runtime_with(tmp_path, config, ScriptedModel([text("ok")]))
    results(runtime, "hello")
    (message,) = [m for m in runtime.plugin_state("late-weather", list) if "stock" in m]
    assert "stock_price" in message
    assert "[tools.providers] gives it to 'tools-weather'" in message
    assert "stock_price" not in runtime.host.components.tools


def test_a_tool_withdrawn_during_a_turn_fails_naming_the_plugin_and_a_new_one_waits_for_the_next_turn(  # noqa: E501
    installed, tmp_path
):
    model = ScriptedModel(
        [
            tool_call("offerer_wait", {}),  # the tools change while this call runs
            tool_call("offerer_ping", {}),
            text("first done"),
            tool_call("offerer_pong", {}),
            text("second done"),
        ]
    )
    runtime = runtime_with(tmp_path, "", model)
    gates = _open_gates(runtime)

    def change_tools() -> None:
        assert gates["arrived"].wait(timeout=600)
        offer = offer_of(runtime)
        assert offer.remove("offerer_ping", why="the server no longer lists it")

        def offerer_pong() -> str:
            """Answer ping."""
            return "ping"

        offer.add(Tool.from_function(offerer_pong, owner="assistant"))
        gates["go"].set()

    waited, ping, pong = results(runtime, "first", "second", during=change_tools)
    assert waited["output"] == "went on"
    assert ping["ok"] is False
    assert ping["error"] == (
        "tool 'offerer_ping' was withdrawn by plugin 'offerer' while the runtime ran "
        "(the server no longer lists it)"
    )
    first_turn_tools = [{s.name for s in call.tools} for call in model.calls[:3]]
    assert all("offerer_pong" not in names for names in first_turn_tools)  # one tool list
    assert all("offerer_ping" in names for names in first_turn_tools)
    assert pong["output"] == "ping"  # the next turn is offered the new tool
    assert "offerer_ping" not in {s.name for s in model.calls[3].tools}


def _open_gates(runtime: Runtime) -> dict[str, threading.Event]:
    gates = runtime.plugin_state("offerer-gates", dict)
    gates.update(arrived=threading.Event(), go=threading.Event())
    return gates
