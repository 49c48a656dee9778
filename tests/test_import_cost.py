"""Start-up stays cheap: what `import toolang_core` and `toolang --help` pull in."""

from __future__ import annotations

import subprocess
import sys


def imported_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_import_toolang_core_loads_only_the_markers():
    modules = imported_after("import toolang_core")
    assert "pluggy" in modules
    for heavy in (
        "click",
        "cattrs",
        "structlog",
        "toolang_core.plugins.host",
        "toolang_core.config",
        "importlib.metadata",
        "sqlite3",
        "asyncio",
    ):
        assert heavy not in modules, heavy


def test_cli_module_does_not_import_commands_or_the_runtime():
    modules = imported_after("import toolang_core.cli.main")
    for lazy in (
        "toolang_core.cli.cmd_doctor",
        "toolang_core.runtime",
        "toolang_core.config",
        "cattrs",
        "sqlite3",
        "asyncio",
    ):
        assert lazy not in modules, lazy


def test_a_host_with_the_builtin_plugins_imports_neither_the_store_nor_the_agent_loop():
    """Every command registers the built-in plugins; few open the store or run a turn."""
    modules = imported_after(
        "from toolang_core.plugins.host import PluginHost\n"
        "host = PluginHost.from_config(None, {}, load_entry_points=False)\n"
        "assert host.components.of_kind('store') and host.components.tools"
    )
    assert "toolang_core.store.sqlite.plugin" in modules
    assert "toolang_core.turn.delegation_plugin" in modules
    for lazy in (
        "sqlite_utils",
        # Only dateutil's package (a few lines) loads with toolang_core, to defer its
        # parser (toolang_core.lazy_imports); none of its modules that cost.
        "dateutil.parser._parser",
        "dateutil.tz",
        "dateutil.rrule",
        "toolang_core.store.sqlite.store",
        "toolang_core.turn.agent",
        "fastjsonschema",
        # The built-in evaluators plugin is registered by every host; only `toolang
        # eval` calls its hook (toolang_core.evals.plugin).
        "toolang_core.evals.types",
        "toolang_core.evals.builtin",
    ):
        assert lazy not in modules, lazy


def test_the_lazily_exported_names_are_the_classes():
    from toolang_core.store.sqlite import SQLiteStore
    from toolang_core.store.sqlite.store import SQLiteStore as Defined
    from toolang_core.turn import AgentExecutor
    from toolang_core.turn.agent import AgentExecutor as DefinedExecutor

    assert SQLiteStore is Defined
    assert AgentExecutor is DefinedExecutor


def test_the_agent_loop_loads_no_schema_compiler_before_a_tool_call():
    modules = imported_after(
        "import toolang_core.turn.agent\n"
        "import sys\n"
        "assert 'fastjsonschema' not in sys.modules\n"
        "from toolang_core.tools.validate import ParamsValidator\n"
        "schema = {'type': 'object', 'required': ['n']}\n"
        "assert ParamsValidator().problem(schema, {}) is not None\n"
        "assert ParamsValidator().problem(schema, {'n': 1}) is None"
    )
    assert "fastjsonschema" in modules  # with the first validation
