"""Memory end to end with the real toolang-memory-sqlite plugin: agents keep their own
memory in real turns, and the `toolang memory` commands and doctor see the same data."""

from __future__ import annotations

import asyncio
import json

import pytest

from toolang_core import NewTurnRequest, TurnStatus
from toolang_core.builtins import builtin_plugins
from toolang_core.config.loader import load_config
from toolang_core.runtime import Runtime
from toolang_core.testing.cli import run_toolang
from toolang_core.testing.models import ScriptedModel, text, tool_call
from toolang_core.testing.runtimes import SCRIPTED_AGENT_CONFIG

CONFIG = (
    SCRIPTED_AGENT_CONFIG
    + """
[memory]
plugin = "sqlite"
"""
)


@pytest.fixture
def home(tmp_path):
    (tmp_path / "toolang.toml").write_text(CONFIG)
    return tmp_path


def turn(home, agent, model, text_in="go", thread="cli:mem"):
    config = load_config(home / "toolang.toml", env={})
    runtime = Runtime.from_config(
        config, env={}, builtins=[*builtin_plugins(), ("scripted", model.plugin())]
    )
    inbox = runtime.open_inbox()
    try:
        turn_id = inbox.submit(
            NewTurnRequest(source="chat", thread_id=thread, input=text_in, agent=agent)
        ).id
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        return inbox.get(turn_id)
    finally:
        inbox.store.close()


def tool_output(model, index=1):
    return json.loads(model.calls[index].messages[-1].content)


def test_an_agent_recalls_only_its_own_memories_in_real_turns(home):
    save = ScriptedModel(
        [
            tool_call("memory_agent_save", {"key": "door", "content": "the door code is 2468"}),
            text("saved"),
        ]
    )
    assert turn(home, "assistant", save).status is TurnStatus.COMPLETED
    assert tool_output(save) == {"ok": True, "output": {"saved": True, "key": "door"}}

    other = ScriptedModel([tool_call("memory_agent_recall", {"query": "door code"}), text("?")])
    assert turn(home, "chronicler", other).status is TurnStatus.COMPLETED
    assert tool_output(other) == {"ok": True, "output": []}

    forget = ScriptedModel([tool_call("memory_agent_forget", {"key": "door"}), text("ok")])
    turn(home, "chronicler", forget)
    assert tool_output(forget)["output"]["forgotten"] == 0

    mine = ScriptedModel([tool_call("memory_agent_recall", {"query": "door code"}), text("2468")])
    turn(home, "assistant", mine)
    (found,) = [f for f in tool_output(mine)["output"] if f.get("key") == "door"]
    assert "2468" in found["text"]


def test_a_completed_exchange_is_remembered_and_recalled_into_a_later_prompt(home):
    first = ScriptedModel([text("Understood: the meeting moved to Thursday.")])
    turn(home, "assistant", first, "the meeting moved to Thursday", thread="cli:a")
    later = ScriptedModel([text("Thursday.")])
    turn(home, "assistant", later, "when is the meeting", thread="cli:b")
    system = later.calls[0].messages[0].content
    assert "## Remembered" in system
    assert "meeting moved to Thursday" in system


def test_the_memory_commands_and_doctor_see_the_same_memory(home):
    model = ScriptedModel(
        [
            tool_call("memory_agent_save", {"key": "pet", "content": "the cat is called Miso"}),
            text("saved"),
        ]
    )
    turn(home, "assistant", model)
    listed = run_toolang("memory", "list", "--json", cwd=home)
    assert listed.returncode == 0, listed.stderr
    keys = [entry["key"] for entry in json.loads(listed.stdout)]
    assert "pet" in keys
    found = run_toolang("memory", "search", "cat Miso", "--json", cwd=home)
    assert json.loads(found.stdout)["items"][0]["key"] == "pet"
    others = run_toolang("memory", "list", "--agent", "chronicler", "--json", cwd=home)
    assert json.loads(others.stdout) == []
    stats = run_toolang("memory", "stats", "--json", cwd=home)
    assert json.loads(stats.stdout)["status"] == "ok"
    doctor = run_toolang("doctor", cwd=home)
    assert "ok    memory     memory plugin 'sqlite' is ok" in doctor.stdout
    forgot = run_toolang("memory", "forget", "--key", "pet", cwd=home)
    assert forgot.stdout.strip() == "forgot 1 entry of agent 'assistant'"
    after = run_toolang("memory", "list", "--json", cwd=home)
    assert "pet" not in [entry["key"] for entry in json.loads(after.stdout)]


def test_memory_commands_say_clearly_when_memory_is_off(tmp_path):
    (tmp_path / "toolang.toml").write_text("")
    result = run_toolang("memory", "stats", cwd=tmp_path)
    assert result.returncode == 2
    assert "memory is off" in result.stderr
    assert "Traceback" not in result.stderr


def test_knowledge_kept_by_the_knowledge_saver_lands_in_the_agents_memory(home):
    (home / "toolang.toml").write_text(
        CONFIG
        + """
[plugins.tools-operator]
workspace = "workspace"

[plugins.hook-knowledge-saver]
min_chars = 20
"""
    )
    (home / "workspace").mkdir()
    (home / "workspace" / "runbook.md").write_text(
        "To restart the ingest service, drain the queue first, then run make restart."
    )
    model = ScriptedModel([tool_call("fs_read", {"path": "runbook.md"}), text("read it")])
    assert turn(home, "operator", model).status is TurnStatus.COMPLETED  # owns fs_read
    found = run_toolang(
        "memory", "search", "restart ingest", "--agent", "operator", "--json", cwd=home
    )
    kinds = [(i["kind"], i["key"][:10]) for i in json.loads(found.stdout)["items"]]
    assert ("knowledge", "knowledge:") in kinds
    other = run_toolang("memory", "search", "restart ingest", "--agent", "chronicler", "--json",
                        cwd=home)  # fmt: skip
    assert json.loads(other.stdout)["items"] == []
