"""What plugins register: provenance, validation, conflicts and plugin settings."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from toolang_core import hookimpl
from toolang_core.agents import AgentLoad
from toolang_core.config import parse_config, validate_plugin_settings
from toolang_core.errors import ConfigError, PluginError
from toolang_core.plugins import PluginStatus
from toolang_core.tools import Tool


def plugin(**hooks):
    return type("TestPlugin", (), {n: staticmethod(hookimpl(f)) for n, f in hooks.items()})()


def tool(name):
    return Tool(name=name, description="", parameters={"type": "object"}, function=lambda: None)


@attrs.frozen
class Source:
    label: str = "builtin"
    name: str = "roles"

    def load(self, context):
        return AgentLoad()


def test_components_remember_which_plugin_registered_them(toolang_host, toolang_register):
    toolang_register(
        plugin(
            toolang_register_memory=lambda register: register("sqlite", lambda ctx: "mem"),
            toolang_register_tools=lambda register: register(tool("fs_read")),
            toolang_agent_sources=lambda: [Source()],
        ),
        "bundle",
    )
    components = toolang_host.components
    assert components.of_kind("memory")["sqlite"].plugin == "bundle"
    assert components.tools["fs_read"].plugin == "bundle"
    assert [(r.source.name, r.plugin) for r in components.agent_sources] == [("roles", "bundle")]
    assert components.provided_by("bundle") == {
        "memorys": ["sqlite"],
        "tools": ["fs_read"],
        "agent sources": ["roles"],
    }


def test_a_single_agent_source_may_be_returned_bare(toolang_host, toolang_register):
    toolang_register(plugin(toolang_agent_sources=lambda: Source(name="one")), "single")
    assert [r.source.name for r in toolang_host.components.agent_sources] == ["one"]


def test_a_tool_name_two_plugins_register_goes_to_neither(toolang_host, toolang_register):
    # Before: the plugin asked first (by name) kept it — a squatter sorting first took
    # another plugin's tool. Now neither gets it; each keeps its other tools.
    def b_tools(register):
        register(tool("fs_read"))
        register(tool("b_other"))

    toolang_register(plugin(toolang_register_tools=b_tools), "b")
    toolang_register(plugin(toolang_register_tools=lambda register: register(tool("fs_read"))), "a")
    components = toolang_host.components
    assert "fs_read" not in components.tools
    assert components.tools["b_other"].plugin == "b"  # b keeps its other tools
    (error,) = toolang_host.errors
    assert error.startswith("tool 'fs_read' is registered by plugin 'a' and plugin 'b'")
    assert '[tools.providers] fs_read = "b"' in error
    assert components.withheld_tools == {"fs_read": error}
    for name in ("a", "b"):
        assert toolang_host.record(name).status is PluginStatus.LOADED
        assert toolang_host.record(name).warnings == [error]
    toolang_host._components = None  # collected again: the error is not repeated
    assert toolang_host.components.tools["b_other"].plugin == "b"
    assert len(toolang_host.errors) == 1


def test_tools_providers_gives_a_contested_name_to_the_plugin_it_names(
    toolang_host, toolang_register
):
    toolang_register(plugin(toolang_register_tools=lambda register: register(tool("fs_read"))), "b")
    toolang_register(plugin(toolang_register_tools=lambda register: register(tool("fs_read"))), "a")
    toolang_host.tool_providers = {"fs_read": "b"}
    assert toolang_host.components.tools["fs_read"].plugin == "b"
    assert toolang_host.errors == [] and toolang_host.warnings == []


def test_a_tool_name_clash_fails_in_strict_mode(toolang_host, toolang_register):
    toolang_register(plugin(toolang_register_tools=lambda register: register(tool("fs_read"))), "b")
    toolang_register(plugin(toolang_register_tools=lambda register: register(tool("fs_read"))), "a")
    toolang_host.strict = True
    with pytest.raises(PluginError, match="tool 'fs_read' is registered by plugin 'a' and"):
        toolang_host.components


def test_a_plugin_registering_one_tool_name_twice_fails(toolang_host, toolang_register):
    def twice(register):
        register(tool("fs_read"))
        register(tool("fs_read"))

    toolang_register(plugin(toolang_register_tools=twice), "a")
    assert toolang_host.components.tools == {}
    assert "registered twice by this plugin" in toolang_host.record("a").error.message


@pytest.mark.parametrize(
    ("hook", "register_call", "message"),
    [
        (
            "toolang_register_stores",
            lambda register: register("Bad Name", lambda c: None),
            "store name 'Bad Name'",
        ),
        (
            "toolang_register_models",
            lambda register: register("demo", "not callable"),
            "factory must be callable",
        ),
        (
            "toolang_register_tools",
            lambda register: register(42),
            "expected a toolang_core.tools.Tool",
        ),
        (
            "toolang_register_tools",
            lambda register: register(tool("has space")),
            "tool name 'has space'",
        ),
        (
            "toolang_register_settings",
            lambda register: register(dict),
            "settings must be an attrs class",
        ),
    ],
)
def test_invalid_registrations_fail_the_plugin_with_the_hook_named(
    toolang_host, toolang_register, hook, register_call, message
):
    toolang_register(plugin(**{hook: register_call}), "bad")
    toolang_host.components
    record = toolang_host.record("bad")
    assert record.status is PluginStatus.FAILED
    assert (record.error.stage, record.error.hook) == ("collect", hook)
    assert message in record.error.message


def test_a_failed_plugin_keeps_none_of_its_contributions(toolang_host, toolang_register):
    def register_models(register):
        register("half", lambda ctx: None)

    def register_tools(register):
        raise RuntimeError("tools broke")

    toolang_register(
        plugin(toolang_register_models=register_models, toolang_register_tools=register_tools),
        "partial",
    )
    assert toolang_host.components.of_kind("model") == {}


def test_async_registration_hooks_are_refused(toolang_host, toolang_register):
    async def register_tools(register):
        register(tool("x"))

    # Refused when it registers now (it used to be refused only once components were
    # collected, and reported "loaded" until then).
    toolang_host.register(plugin(toolang_register_tools=register_tools), "async")
    record = toolang_host.record("async")
    assert (record.status, record.error.stage) == (PluginStatus.FAILED, "validate")
    assert "toolang_register_tools is async" in record.error.message


@attrs.frozen
class ChatSettings:
    history_limit: int = 50
    greeting: str = "hi"


def test_plugin_settings_are_validated_with_the_core_rules(toolang_host, toolang_register):
    toolang_register(
        plugin(toolang_register_settings=lambda register: register(ChatSettings)), "source-chat"
    )
    config = parse_config(
        '[plugins.source-chat]\nhistory_limit = "many"\ngreetng = "yo"\n',
        file=Path("toolang.toml"),
        env={},
    )
    with pytest.raises(ConfigError) as info:
        validate_plugin_settings(config, toolang_host, env={})
    assert info.value.problems == [
        "toolang.toml: plugins.source-chat.history_limit: expected an integer, "
        'found a string ("many")',
        "toolang.toml: plugins.source-chat.greetng: unknown key (did you mean 'greeting'?)",
    ]


def test_absent_plugin_section_gives_defaults(toolang_host, toolang_register):
    toolang_register(
        plugin(toolang_register_settings=lambda register: register(ChatSettings)), "source-chat"
    )
    config = parse_config("", file=Path("toolang.toml"), env={})
    assert validate_plugin_settings(config, toolang_host, env={}) == {"source-chat": ChatSettings()}


def test_section_for_an_uninstalled_plugin_is_a_warning_not_an_error(
    toolang_host, toolang_register
):
    import io

    import structlog

    from toolang_core.logs import configure_logging

    toolang_register(
        plugin(toolang_register_settings=lambda register: register(ChatSettings)), "source-chat"
    )
    config = parse_config("[plugins.tools-weather]\nkey = 1\n", file=Path("toolang.toml"), env={})
    stream = io.StringIO()
    configure_logging(level="warning", fmt="json", stream=stream)
    try:
        settings = validate_plugin_settings(config, toolang_host, env={})
    finally:
        structlog.reset_defaults()
    assert settings == {"source-chat": ChatSettings()}
    assert (
        "plugins.tools-weather: no installed plugin is named 'tools-weather'; section ignored"
        in stream.getvalue()
    )
    toolang_host.strict = True  # strict mode: every unowned section is an error
    with pytest.raises(ConfigError, match=r"plugins\.tools-weather: no installed plugin"):
        validate_plugin_settings(config, toolang_host, env={})


def test_section_whose_name_is_a_near_miss_of_a_plugin_is_an_error(toolang_host, toolang_register):
    toolang_register(
        plugin(toolang_register_settings=lambda register: register(ChatSettings)), "source-chat"
    )
    config = parse_config("[plugins.source-chta]\nx = 1\n", file=Path("toolang.toml"), env={})
    with pytest.raises(ConfigError) as info:
        validate_plugin_settings(config, toolang_host, env={})
    assert info.value.problems == [
        "toolang.toml: plugins.source-chta: no installed plugin is named 'source-chta' "
        "(did you mean 'source-chat'?)"
    ]


def test_section_for_a_plugin_without_settings_is_an_error(toolang_host, toolang_register):
    toolang_register(plugin(toolang_register_tools=lambda register: None), "quiet")
    config = parse_config("[plugins.quiet]\nx = 1\n", file=Path("toolang.toml"), env={})
    with pytest.raises(ConfigError, match="plugin 'quiet' takes no settings"):
        validate_plugin_settings(config, toolang_host, env={})


def test_section_of_a_failed_plugin_is_left_alone(toolang_host, toolang_register):
    def broken(register):
        raise RuntimeError("x")

    toolang_register(plugin(toolang_register_tools=broken), "broken")
    config = parse_config("[plugins.broken]\nx = 1\n", file=Path("toolang.toml"), env={})
    assert validate_plugin_settings(config, toolang_host, env={}) == {}
