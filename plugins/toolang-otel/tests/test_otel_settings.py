"""``[plugins.otel]`` is validated like every plugin section: errors name the key."""

from __future__ import annotations

import pytest

import toolang_otel as plugin
from toolang_core import ConfigError


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ('exporter = "jaeger"', "plugins.otel.exporter"),
        ("sample_ratio = 2", "sample_ratio: expected a number from 0 to 1, found 2"),
        ('endpoint = "localhost:4317"', "endpoint: expected an http:// or https:// URL"),
        ("timeout_seconds = 0", "timeout_seconds: expected a number >= 0.001"),
        ('protocol = "udp"', "plugins.otel.protocol"),
        ("unknown_key = 1", "unknown_key"),
    ],
)
def test_a_bad_setting_is_refused_naming_its_key(toolang_runtime, settings, expected):
    with pytest.raises(ConfigError) as raised:
        toolang_runtime(f"[plugins.otel]\n{settings}\n", plugins={plugin.NAME: plugin})
    assert any(expected in problem for problem in raised.value.problems), raised.value.problems


def test_a_header_value_is_a_secret_never_shown(toolang_runtime):
    runtime = toolang_runtime(
        '[plugins.otel]\nexporter = "otlp"\nheaders = { authorization = "Bearer s3cr3t-t0ken" }\n',
        plugins={plugin.NAME: plugin},
    )
    settings = runtime.settings[plugin.NAME]
    assert settings.headers["authorization"].reveal() == "Bearer s3cr3t-t0ken"
    assert "s3cr3t" not in repr(settings)


def test_importing_the_plugin_does_not_import_the_sdk():
    import subprocess
    import sys

    code = (
        "import sys, toolang_otel; print(any(m.startswith('opentelemetry') for m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_runtime_with_telemetry_off_never_imports_the_sdk(tmp_path):
    """The SDK loads when a runtime starts with an exporter set, not for every start."""
    import subprocess
    import sys

    code = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "import toolang_otel\n"
        "from toolang_core import NewTurnRequest, Runtime\n"
        "from toolang_core.config import load_config\n"
        "home = Path(sys.argv[1])\n"
        "(home / 'toolang.toml').write_text('[runtime]\\nexecutor = \"echo\"\\n')\n"
        "env = {'HOME': str(home)}\n"
        "runtime = Runtime.with_plugins(load_config(home / 'toolang.toml', env=env),\n"
        "                               [('otel', toolang_otel)], env=env)\n"
        "inbox = runtime.open_inbox()\n"
        "turn = inbox.submit(NewTurnRequest(source='chat', thread_id='cli:t', input='hi')).id\n"
        "inbox.store.close()\n"
        "asyncio.run(runtime.serve(asyncio.Event(), sources=(), only=[turn], until_idle=True))\n"
        "print(runtime.open_inbox().get(turn).output)\n"
        "print(any(m.startswith('opentelemetry') for m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["hi", "False"]  # after the runtime's log lines
