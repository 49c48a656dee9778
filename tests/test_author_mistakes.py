"""Plugin authors' mistakes that used to pass in silence (issue #31, item 14) each get a
warning or an error naming the distribution, the function or the key:

- a ``[plugins.<name>]`` section for a plugin that is not installed (doctor said "no
  problems found");
- entry points declared in a misspelt group (``toolang_plugins``, ``toolang-plugins``,
  ``Toolang``): the distribution was never loaded, nothing said why;
- a ``toolang_*`` function without ``@hookimpl``: never called;
- an ``async def`` registration hook, which the ``toolang_register`` fixture reported
  as loaded;
- a near-miss turn-source name in ``[scheduler.groups.<name>]`` or ``[memory]
  save_turns``: settings that applied to nothing.

Plugins are real distributions on a ``sys.path`` entry.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, distribution

import pytest

from toolang_core.doctor import run_checks
from toolang_core.errors import PluginError
from toolang_core.plugins.host import PluginHost
from toolang_core.plugins.records import PluginStatus

TOOLS = """
from toolang_core import Tool, hookimpl

@hookimpl
def toolang_register_tools(register):
    register(Tool(name="x_ping", description="Ping.", parameters={"type": "object"},
                  function=lambda: "pong"))
"""


def bundled(*names: str) -> pytest.MarkDecorator:
    """Skip where the bundled plugins ``names`` are not installed: the core's own env
    has none; the integration env, which runs these tests too, has them all."""
    missing = []
    for name in names:
        try:
            distribution(name)
        except PackageNotFoundError:
            missing.append(name)
    return pytest.mark.skipif(
        bool(missing), reason=f"needs {', '.join(missing)} installed (the integration env)"
    )


def doctor(tmp_path, config: str, load: str) -> list[tuple[str, str]]:
    (tmp_path / "toolang.toml").write_text(config, encoding="utf-8")
    findings = run_checks(tmp_path / "toolang.toml", env={"TOOLANG_LOAD_PLUGINS": load})
    return [(f.status, f.summary) for f in findings]


def problems(findings: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [f for f in findings if f[0] in ("warn", "fail")]


# -- a section for a plugin that is not installed -------------------------------------------


@bundled("toolang-model-demo")
def test_a_section_for_a_plugin_that_is_not_installed_is_a_doctor_warning(tmp_path):
    findings = doctor(tmp_path, '[plugins.weather-station]\ncity = "Oslo"\n', "model-demo")
    (warning,) = problems(findings)  # before: no problem found
    assert warning[0] == "warn"
    assert "plugins.weather-station: no installed plugin is named 'weather-station'" in warning[1]
    assert "section ignored until one is installed" in warning[1]


@bundled("toolang-source-chat")
def test_a_section_that_is_a_near_miss_of_an_installed_plugin_is_an_error(tmp_path):
    findings = doctor(tmp_path, "[plugins.source-chta]\nx = 1\n", "source-chat")
    (failure,) = problems(findings)
    assert failure[0] == "fail"


# -- entry points in a misspelt group --------------------------------------------------------


@pytest.mark.parametrize("group", ["toolang_plugins", "toolang-plugins", "Toolang", "toolnag"])
def test_entry_points_in_a_misspelt_group_are_reported(toolang_distribution, tmp_path, group):
    toolang_distribution(
        "toolang-tools-x", "2.0", entry_points={group: {"tools-x": "tl_x"}}, modules={"tl_x": TOOLS}
    )
    host = PluginHost.from_config(None, {})
    (warning,) = [w for w in host.warnings if "toolang-tools-x" in w]
    assert warning.startswith(
        f"distribution toolang-tools-x 2.0 declares entry points in group {group!r} "
        "(tools-x = tl_x) but none in 'toolang': toolang never loads it"
    )
    assert "[project.entry-points.toolang]" in warning
    assert ("warn", warning) in doctor(tmp_path, "", "")
    with pytest.raises(PluginError, match="declares entry points in group"):
        PluginHost.from_config(None, {}, strict=True)


def test_a_distribution_with_a_toolang_group_besides_is_not_reported(toolang_distribution):
    toolang_distribution(
        "toolang-tools-x",
        entry_points={"toolang": {"tools-x": "tl_x"}, "toolang_extras": {"more": "tl_x"}},
        modules={"tl_x": TOOLS},
    )
    toolang_distribution("other-lib", entry_points={"console_scripts": {"other": "tl_x"}})
    host = PluginHost.from_config(None, {"TOOLANG_LOAD_PLUGINS": "tools-x"})
    assert host.warnings == []
    assert host.record("tools-x").status is PluginStatus.LOADED


# -- a toolang_* function without @hookimpl --------------------------------------------------


def test_a_hook_function_without_hookimpl_is_a_warning(toolang_distribution):
    source = """
from toolang_core import Tool, hookimpl
from toolang_core.testing.models import tool_call as toolang_imported_helper

def toolang_register_tools(register):
    register(Tool(name="x_ping", description="", parameters={}, function=lambda: 1))

def toolang_regster_models(register):
    pass

def toolang_helper_of_mine():
    pass

@hookimpl
def toolang_startup(runtime):
    pass
"""
    toolang_distribution(
        "toolang-tools-x", entry_points={"toolang": {"tools-x": "tl_x"}}, modules={"tl_x": source}
    )
    host = PluginHost.from_config(None, {"TOOLANG_LOAD_PLUGINS": "tools-x"})
    record = host.record("tools-x")
    assert record.status is PluginStatus.LOADED
    assert record.warnings == [
        "function toolang_register_tools is not marked @hookimpl, so toolang never calls it "
        "(decorate it with toolang_core.hookimpl)",
        "function toolang_regster_models is not marked @hookimpl and is no toolang hook (did "
        "you mean 'toolang_register_models', marked with toolang_core.hookimpl?)",
    ]
    assert "x_ping" not in host.components.tools


def test_a_method_without_hookimpl_on_a_plugin_object_is_a_warning(toolang_host):
    class Plugin:
        def toolang_register_tools(self, register):
            pass

    toolang_host.register(Plugin(), "p")
    assert toolang_host.record("p").warnings == [
        "function toolang_register_tools is not marked @hookimpl, so toolang never calls it "
        "(decorate it with toolang_core.hookimpl)"
    ]


# -- an async registration hook ------------------------------------------------------------


def test_the_register_fixture_refuses_an_async_registration_hook(pytester):
    pytester.makepyfile(
        """
        import pytest
        from toolang_core import Tool, hookimpl
        from toolang_core.errors import PluginError

        class Plugin:
            @hookimpl
            async def toolang_register_tools(self, register):
                register(Tool(name="t_one", description="", parameters={}, function=lambda: 1))

        def test_async_registration(toolang_register):
            with pytest.raises(PluginError) as info:
                toolang_register(Plugin(), "p")
            message = str(info.value)
            assert "plugin 'p' failed validation in hook toolang_register_tools" in message
            assert "toolang_register_tools is async" in message
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_an_installed_plugin_with_an_async_registration_hook_fails(toolang_distribution):
    source = TOOLS.replace("def toolang_register_tools", "async def toolang_register_tools")
    toolang_distribution(
        "toolang-tools-x", entry_points={"toolang": {"tools-x": "tl_x"}}, modules={"tl_x": source}
    )
    host = PluginHost.from_config(None, {"TOOLANG_LOAD_PLUGINS": "tools-x"})
    record = host.record("tools-x")
    assert (record.status, record.error.stage) == (PluginStatus.FAILED, "validate")
    assert "make it a plain def" in record.error.message


# -- a near-miss turn-source name ------------------------------------------------------------


@bundled("toolang-source-chat", "toolang-source-invoke", "toolang-model-demo")
def test_a_near_miss_source_name_is_a_doctor_warning(tmp_path):
    config = (
        "[scheduler.groups.chta]\nmax_running = 2\n"
        "[scheduler.groups.outside]\nmax_running = 1\n"  # a --source of its own: fine
        '[memory]\nsave_turns = ["chat", "invok", "outside"]\n'
    )
    findings = doctor(tmp_path, config, "source-chat,source-invoke,model-demo")
    found = [summary for status, summary in problems(findings) if status == "warn"]
    assert found == [
        f"{tmp_path / 'toolang.toml'}: scheduler.groups.chta: 'chta' names no registered turn "
        "source (did you mean 'chat'? sources: chat, invoke, task)",
        f"{tmp_path / 'toolang.toml'}: memory.save_turns: 'invok' names no registered turn "
        "source (did you mean 'invoke'? sources: chat, invoke, task)",
    ]
