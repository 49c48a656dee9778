"""`toolang --help` imports every plugin: this one must stay cheap to import."""

from __future__ import annotations

import subprocess
import sys


def imported_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_importing_the_plugin_loads_no_delivery_machinery():
    modules = imported_after("import toolang_hook_event_publisher")
    for heavy in ("httpx", "asyncio", "toolang_hook_event_publisher.publisher"):
        assert heavy not in modules, heavy


def test_a_runtime_without_a_webhook_never_imports_httpx(tmp_path):
    code = f"""
import asyncio
from pathlib import Path
from toolang_core import Event
from toolang_hook_event_publisher.publisher import Publisher
from toolang_hook_event_publisher.settings import PublisherSettings, SinkSettings

publisher = Publisher(PublisherSettings(
    sinks=[SinkSettings("jsonl", path=Path({str(tmp_path / "e.jsonl")!r}))]
))

async def main():
    publisher.accept(Event("turn.completed"))
    await publisher.shutdown("stop")

asyncio.run(main())
"""
    modules = imported_after(code)
    assert "toolang_hook_event_publisher.sinks" in modules
    assert "httpx" not in modules
