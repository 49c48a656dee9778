import asyncio

from toolang_core import Event, Runtime
from toolang_core.config import ToolangConfig

import toolang_events_frozen as plugin


def test_counts_events_per_runtime(toolang_host, toolang_register, tmp_path):
    toolang_register(plugin, "events-frozen")
    runtime = Runtime(ToolangConfig(base_dir=tmp_path), toolang_host)
    for kind in ("turn.completed", "turn.completed", "tool.called"):
        asyncio.run(toolang_host.hooks.on_event(Event(kind), runtime))
    assert plugin.counts(runtime) == {"turn.completed": 2, "tool.called": 1}
