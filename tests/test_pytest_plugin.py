"""The toolang pytest plugin, tested as plugin authors use it (pytester)."""

from __future__ import annotations

import subprocess
import sys


def test_fixtures_are_available_without_any_configuration(pytester):
    pytester.makepyfile("""
        from toolang_core import hookimpl, Tool

        class Plugin:
            @hookimpl
            def toolang_register_tools(self, register):
                register(Tool(name="t_one", description="", parameters={}, function=lambda: 1))

        def test_register_and_collect(toolang_host, toolang_register):
            record = toolang_register(Plugin(), "p")
            assert record.hooks == ("toolang_register_tools",)
            assert toolang_host.components.tools["t_one"].plugin == "p"

        def test_host_starts_empty(toolang_host):
            assert toolang_host.active_names == []

        def test_pm_knows_every_hook(toolang_pm):
            assert toolang_pm.hook.toolang_filter_tool_call.has_spec()

        def test_home_loads_its_config(toolang_home):
            toolang_home.write_config("[scheduler]\\nmax_running = 3\\n")
            assert toolang_home.load().scheduler.max_running == 3

        def test_distribution_is_found_by_entry_points(toolang_distribution):
            toolang_distribution("toolang-x", entry_points={"toolang": {"x": "tlx"}},
                                 modules={"tlx": "VALUE = 1"})
            from toolang_core.plugins import scan_entry_points
            assert [i.name for i in scan_entry_points() if i.distribution == "toolang-x"] == ["x"]
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=5)


def test_register_fixture_unregisters_after_each_test(pytester):
    pytester.makepyfile("""
        import pytest

        @pytest.fixture(scope="module")
        def shared():
            return {}

        class Plugin:
            pass

        def test_first(toolang_host, toolang_register, shared):
            toolang_register(Plugin(), "p")
            shared["host"] = toolang_host
            assert toolang_host.pm.has_plugin("p")

        def test_after(shared):
            assert not shared["host"].pm.has_plugin("p")
    """)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_plugin_module_imports_nothing_from_toolang_at_load():
    code = (
        "import sys, toolang_core.testing.pytest_plugin as p; "
        "heavy = [m for m in ('toolang_core.plugins.host', 'toolang_core.config', 'cattrs', "
        "'structlog') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
