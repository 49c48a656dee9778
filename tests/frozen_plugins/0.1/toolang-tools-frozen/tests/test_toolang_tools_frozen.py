import asyncio

from toolang_core import NewTurnRequest, PluginContext, TurnStatus
from toolang_core.config import ToolangConfig
from toolang_core.testing.models import text, tool_call

import toolang_tools_frozen as plugin


def test_registers_its_tool(toolang_host, toolang_register):
    toolang_register(plugin, "tools-frozen")
    registered = toolang_host.components.tools["frozen_hello"]
    assert registered.plugin == "tools-frozen"
    assert registered.tool.function(name="Ada") == "Hello, Ada!"


def test_brings_the_agent_that_owns_its_tools(toolang_host, toolang_register, tmp_path):
    toolang_register(plugin, "tools-frozen")
    context = PluginContext(plugin_name="tools-frozen", config=ToolangConfig(base_dir=tmp_path))
    (agent,) = plugin.toolang_agent_sources().load(context).definitions
    assert (agent.name, agent.prefixes) == ("frozen", ("frozen_",))
    tools = toolang_host.components.tools
    mine = [name for name, registered in tools.items() if registered.plugin == "tools-frozen"]
    assert mine and all(name.startswith(agent.prefixes[0]) for name in mine)


def test_its_agent_calls_the_tool_in_a_turn(toolang_runtime, toolang_scripted_model):
    model = toolang_scripted_model([tool_call("frozen_hello", {"name": "Ada"}), text("Done.")])
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n',
        plugins={"tools-frozen": plugin, "scripted": model.plugin()},
    )
    inbox = runtime.open_inbox()
    request = NewTurnRequest(source="chat", thread_id="t1", input="greet Ada", agent="frozen")
    turn_id = inbox.submit(request).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    assert (inbox.get(turn_id).status, inbox.get(turn_id).output) == (
        TurnStatus.COMPLETED,
        "Done.",
    )
    steps = runtime.open_store().steps(turn_id)
    (result,) = [step.data["result"] for step in steps if "result" in step.data]
    assert result["output"] == "Hello, Ada!"
