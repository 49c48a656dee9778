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
