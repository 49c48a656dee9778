"""The memory contract, checked by toolang's conformance suite, and the plugin in a runtime."""

import asyncio
import contextlib

import pytest
from toolang_core.memory import MemoryEntry, MemoryWriteBatch
from toolang_core.testing.memory_conformance import MemoryConformance

import toolang_memory_frozen as plugin


class TestConformance(MemoryConformance):
    @pytest.fixture
    def toolang_memory_factory(self, tmp_path):
        return lambda: plugin.FrozenMemory(tmp_path / "memory.json")

    @contextlib.contextmanager
    def failing(self, memory):
        # A directory where the next write puts its temporary file: the write fails.
        blocker = memory.path.with_suffix(".tmp")
        blocker.mkdir(parents=True)
        try:
            yield
        finally:
            blocker.rmdir()


def test_the_runtime_remembers_through_it(toolang_runtime):
    runtime = toolang_runtime(
        '[memory]\nplugin = "frozen"\n', plugins={"memory-frozen": plugin}
    )
    batch = MemoryWriteBatch(
        agent_uri="toolang://test/agents/assistant",
        agent_id="assistant",
        entries=(MemoryEntry("the quokka likes figs", key="quokka"),),
    )
    memory = runtime.memory.plugin
    assert memory.remember(batch).written == 1
    assert (runtime.config.base_dir / ".toolang" / "frozen-memory.json").is_file()
    health = asyncio.run(runtime.memory.health())
    assert (health.status, health.entries) == ("ok", 1)
