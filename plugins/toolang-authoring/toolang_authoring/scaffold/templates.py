"""Templates for ``toolang plugin new``: ``string.Template`` text (``${ident}`` fields).

The source, memory and model families live in :mod:`toolang_authoring.scaffold.working`;
the files of a standalone repository in :mod:`toolang_authoring.scaffold.standalone`.
"""

from __future__ import annotations

import string

PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.25"]
build-backend = "hatchling.build"

[project]
name = "${distribution}"
version = "0.1.0"
description = "A toolang ${family} plugin."
readme = "README.md"
requires-python = ">=3.11"
# The toolang release series this plugin supports (a 0.x minor release may change a
# public contract: see toolang's CHANGELOG.md). Widen it once the tests pass on the next.
dependencies = ["${pin}"]

[project.optional-dependencies]
test = ["toolang-core[testing]", "pytest>=8.3"]

[project.entry-points.toolang]
${entry_point} = "${package}"

[tool.hatch.build.targets.wheel]
packages = ["${package}"]
"""

README = """\
# ${distribution}

A toolang ${family} plugin. Its entry point is `${entry_point}` in group `toolang`.
Install it into the same environment (venv) as toolang itself — the one whose
`toolang` you run, e.g. `.venv/bin/python -m pip …` for the repository's `.venv`:

    python -m pip install -e .            # then `toolang plugins` lists it
    python -m pip install -e '.[test]' && python -m pytest
"""

TOOLS_MODULE = '''\
"""${distribution}: a toolang tools plugin.

Its tools are named ``${ident}_*``, and it brings the agent that owns them: the agent
``${ident}`` claims the prefix ``${ident}_`` (an ``embedded`` agent source), so a turn
can use the tools as soon as the plugin is installed — talk to it with
``toolang chat --agent ${ident} …``. Add a tool: register it under a ``${ident}_`` name.
An AGENT.md named ``${ident}`` in your ``[agents] dir`` replaces this agent.
"""

from __future__ import annotations

from typing import Literal

from toolang_core import (
    AgentDefinition,
    AgentLoad,
    PluginContext,
    RegisterTool,
    Tool,
    hookimpl,
)

AGENT = "${ident}"
PREFIX = "${ident}_"


def ${ident}_hello(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    register(
        Tool(
            name="${ident}_hello",
            description="Greet someone by name.",
            parameters={
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
            function=${ident}_hello,
        )
    )


class ${class_name}Agents:
    """The agent that owns this plugin's tools (every tool named ``${ident}_*``)."""

    label: Literal["embedded"] = "embedded"
    name = "${entry_point}"

    def load(self, context: PluginContext) -> AgentLoad:
        agent = AgentDefinition(
            name=AGENT,
            description="Uses the ${ident}_* tools.",
            instruction="You use the ${ident}_* tools to answer. Say what a tool returned.",
            prefixes=(PREFIX,),
            keywords=("${name}",),
            source="embedded",
            origin="${package}",
        )
        return AgentLoad(definitions=(agent,))


@hookimpl
def toolang_agent_sources() -> ${class_name}Agents:
    return ${class_name}Agents()
'''

TOOLS_TEST = """\
import asyncio
import json

from toolang_core import NewTurnRequest, PluginContext, TurnStatus
from toolang_core.config import ToolangConfig
from toolang_core.testing.models import text, tool_call

import ${package} as plugin


def test_registers_its_tool(toolang_host, toolang_register):
    toolang_register(plugin, "${entry_point}")
    registered = toolang_host.components.tools["${ident}_hello"]
    assert registered.plugin == "${entry_point}"
    assert registered.tool.function(name="Ada") == "Hello, Ada!"


def test_brings_the_agent_that_owns_its_tools(toolang_host, toolang_register, tmp_path):
    toolang_register(plugin, "${entry_point}")
    context = PluginContext(plugin_name="${entry_point}", config=ToolangConfig(base_dir=tmp_path))
    (agent,) = plugin.toolang_agent_sources().load(context).definitions
    assert (agent.name, agent.prefixes) == ("${ident}", ("${ident}_",))
    tools = toolang_host.components.tools
    mine = [name for name, registered in tools.items() if registered.plugin == "${entry_point}"]
    assert mine and all(name.startswith(agent.prefixes[0]) for name in mine)


def test_its_agent_calls_the_tool_in_a_turn(toolang_runtime, toolang_scripted_model, toolang_cli):
    model = toolang_scripted_model([tool_call("${ident}_hello", {"name": "Ada"}), text("Done.")])
    runtime = toolang_runtime(
        '[models]\\ndefault = "scripted"\\n',
        plugins={"${entry_point}": plugin, "scripted": model.plugin()},
    )
    inbox = runtime.open_inbox()
    request = NewTurnRequest(source="chat", thread_id="t1", input="greet Ada", agent="${ident}")
    turn_id = inbox.submit(request).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    assert (inbox.get(turn_id).status, inbox.get(turn_id).output) == (
        TurnStatus.COMPLETED,
        "Done.",
    )
    steps = runtime.open_store().steps(turn_id)
    (result,) = [step.data["result"] for step in steps if "result" in step.data]
    assert result["output"] == "Hello, Ada!"
    # What an operator sees: the turn's trace, read by the real toolang command.
    trace = json.loads(toolang_cli("turns", "trace", turn_id, "--json").stdout)
    (call,) = [step["data"] for step in trace["steps"] if step["kind"] == "tool_call"]
    assert [stage["verdict"] for stage in call["chain"]] == ["pass", "pass", "ok"]
"""

HOOK_MODULE = '''\
"""${distribution}: a toolang SecurityFilter that blocks calls mentioning a word."""

from __future__ import annotations

import attrs

from toolang_core import Block, RegisterSettings, ToolCall, ToolCallContext, hookimpl


@attrs.frozen
class Settings:
    """[plugins.${entry_point}] in toolang.toml."""

    blocked_word: str = "forbidden"


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(Settings)


@hookimpl
def toolang_filter_tool_call(call: ToolCall, ctx: ToolCallContext) -> Block | None:
    word = ctx.runtime.settings_for("${entry_point}", Settings).blocked_word
    if any(word in str(value) for value in call.params.values()):
        return Block(f"parameters mention {word!r}")
    return None
'''

HOOK_TEST = """\
import asyncio

from toolang_core import Block, NewTurnRequest, RegisterTool, Tool, hookimpl
from toolang_core.testing import filter_tool_call
from toolang_core.testing.models import text, tool_call

import ${package} as plugin


def check(host, context, params):
    ctx = context("fs_read", params)
    return asyncio.run(filter_tool_call(host.hooks, ctx.call, ctx))


def test_blocks_calls_that_mention_the_word(toolang_host, toolang_register, toolang_call_context):
    toolang_register(plugin, "${entry_point}")
    outcome = check(toolang_host, toolang_call_context, {"path": "forbidden.txt"})
    assert outcome.blocked == ("${entry_point}", Block("parameters mention 'forbidden'"))


def test_lets_other_calls_through(toolang_host, toolang_register, toolang_call_context):
    toolang_register(plugin, "${entry_point}")
    assert check(toolang_host, toolang_call_context, {"path": "notes.txt"}).blocked is None


def shout(text: str) -> str:  # a tool for the filter to guard
    return text.upper()


class ShoutTool:
    @hookimpl
    def toolang_register_tools(self, register: RegisterTool) -> None:
        register(Tool.from_function(shout))


def test_a_turn_s_call_that_mentions_the_word_never_runs(toolang_runtime, toolang_scripted_model):
    model = toolang_scripted_model([tool_call("shout", {"text": "forbidden"}), text("Refused.")])
    runtime = toolang_runtime(
        '[models]\\ndefault = "scripted"\\n',
        plugins={"${entry_point}": plugin, "shout": ShoutTool(), "scripted": model.plugin()},
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="t1", input="shout")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    steps = runtime.open_store().steps(turn_id)
    (result,) = [step.data["result"] for step in steps if "result" in step.data]
    assert result["ok"] is False and "parameters mention 'forbidden'" in result["error"]
"""

EVENTS_MODULE = '''\
"""${distribution}: a toolang event subscriber that counts events by kind."""

from __future__ import annotations

from collections import Counter

from toolang_core import Event, Runtime, hookimpl


def counts(runtime: Runtime) -> Counter[str]:
    """This runtime's event counts (per-runtime state, never a module global)."""
    return runtime.plugin_state("${entry_point}", Counter)


@hookimpl
def toolang_on_event(event: Event, runtime: Runtime) -> None:
    counts(runtime)[event.kind] += 1
'''

EVENTS_TEST = """\
import asyncio

from toolang_core import Event, Runtime
from toolang_core.config import ToolangConfig

import ${package} as plugin


def test_counts_events_per_runtime(toolang_host, toolang_register, tmp_path):
    toolang_register(plugin, "${entry_point}")
    runtime = Runtime(ToolangConfig(base_dir=tmp_path), toolang_host)
    for kind in ("turn.completed", "turn.completed", "tool.called"):
        asyncio.run(toolang_host.hooks.on_event(Event(kind), runtime))
    assert plugin.counts(runtime) == {"turn.completed": 2, "tool.called": 1}
"""

COMPONENT_MODULE = '''\
"""${distribution}: a toolang ${family} plugin."""

from __future__ import annotations

from toolang_core import PluginContext, RegisterFactory, hookimpl


class ${class_name}:
    """Replace with the real component; the factory below builds one per runtime."""

    def __init__(self, context: PluginContext) -> None:
        self.context = context


@hookimpl
def ${hook}(register: RegisterFactory) -> None:
    register("${ident}", ${class_name}, description="A ${family} component.")
'''

COMPONENT_TEST = """\
from toolang_core import PluginContext
from toolang_core.config import ToolangConfig

import ${package} as plugin


def test_registers_its_${kind_ident}(toolang_host, toolang_register, tmp_path):
    toolang_register(plugin, "${entry_point}")
    registration = toolang_host.components.of_kind("${kind}")["${ident}"]
    assert registration.plugin == "${entry_point}"
    context = PluginContext(plugin_name="${entry_point}", config=ToolangConfig(base_dir=tmp_path))
    assert isinstance(registration.factory(context), plugin.${class_name})
"""


def _component(hook: str, kind: str, class_name: str) -> tuple[str, str]:
    # Fill the fixed fields now; the per-plugin ones stay as ${placeholders}.
    fields = {
        "hook": hook,
        "kind": kind,
        "class_name": class_name,
        "kind_ident": kind.replace(" ", "_"),
    }
    return (
        string.Template(COMPONENT_MODULE).safe_substitute(fields),
        string.Template(COMPONENT_TEST).safe_substitute(fields),
    )


STORE = _component("toolang_register_stores", "store", "Store")
"""A store's stub only registers a class: an execution store is a large contract (see
toolang_core.testing.store_conformance); toolang-store-postgres is the example."""
