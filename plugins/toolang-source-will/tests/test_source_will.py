"""toolang-source-will, alone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import toolang_source_will as plugin
from toolang_core.runtime.inbox import Inbox
from toolang_core.store.types import TurnFilter
from toolang_source_will import WillSettings
from toolang_source_will.wills import WillSource

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC).timestamp()
ECHO = '[runtime]\nexecutor = "echo"\n'
ENV = {"TOOLANG_LOAD_PLUGINS": "source-will"}


class Clock:
    now = T0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def agents(tmp_path):
    root = tmp_path / "agents"
    (root / "planner").mkdir(parents=True)
    (root / "planner" / "will.md").write_text("---\ninterval: 3600\n---\nReview the plan.\n")
    (root / "broken").mkdir()
    (root / "broken" / "will.md").write_text("---\ninterval: soon\n---\nx\n")
    return root


def test_wills_fire_per_agent_coalesced_and_low_priority(toolang_runtime, agents):
    runtime = toolang_runtime(ECHO, plugins={"source-will": plugin})
    store = runtime.open_store()
    clock = Clock()
    inbox = Inbox(store, runtime.policy, clock=clock)
    source = WillSource(WillSettings(dir=agents), agents.parent)
    assert source.tick(inbox, store) == T0 + 3600  # first sight: wait for the next occurrence
    assert "interval must be a number of seconds" in "\n".join(source.problems)
    clock.now += 3 * 3600 + 5
    source.tick(inbox, store)
    clock.now += 3600
    source.tick(inbox, store)
    (turn,) = store.list_turns(TurnFilter(thread_id="will:planner"))
    assert (turn.source, turn.agent, turn.sender, turn.priority) == ("will", "planner", "self", 0)
    assert turn.input == "Review the plan."
    assert turn.meta["will"]["occurrence"] == T0 + 4 * 3600


def test_the_wills_command(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    will = toolang_home.path / "agents" / "planner" / "will.md"
    will.parent.mkdir(parents=True)
    will.write_text("---\nschedule: FREQ=DAILY\n---\nReflect.\n")
    result = toolang_cli("wills", env=ENV)
    assert result.returncode == 0, result.stderr
    assert "planner" in result.stdout and "FREQ=DAILY" in result.stdout
