"""toolang-tools-chronicler with the real SQLite memory plugin: observations and
reflections driven by the scripted model through the whole tool chain, agent-scoped,
and a reflection a later turn recalls."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import toolang_memory_sqlite
import toolang_tools_chronicler as plugin
from toolang_core import AgentDefinition, AgentLoad, hookimpl
from toolang_core.testing.models import text, tool_call
from toolang_core.testing.runtimes import run_turn, tool_results

CONFIG = '[models]\ndefault = "scripted"\n[memory]\nplugin = "sqlite"\n'
REFLECTION = "The user prefers short answers in French and works on billing on Mondays."


class ScribeAgents:
    """A second agent (the built-in roles are not installed in this plugin's env)."""

    label = "builtin"
    name = "test-scribe"

    def load(self, context):
        scribe = AgentDefinition(
            name="scribe", instruction="You keep notes.", prefixes=("observe_*", "reflect_*")
        )
        return AgentLoad(definitions=(scribe,))


class ScribePlugin:
    @staticmethod
    @hookimpl
    def toolang_agent_sources():
        return ScribeAgents()


@pytest.fixture
def chronicler(toolang_runtime, toolang_scripted_model):
    """``run(script, agent=…)``: one turn of ``agent`` whose model plays ``script``."""

    def run(script, *, agent=None, extra="", said="go"):
        model = toolang_scripted_model(script)
        runtime = toolang_runtime(
            CONFIG + extra,
            plugins={
                "tools-chronicler": plugin,
                "sqlite": toolang_memory_sqlite,
                "scripted": model.plugin(),
                "scribe": ScribePlugin(),
            },
        )
        turn_id = run_turn(runtime, said, agent=agent)
        return runtime, model, tool_results(runtime, turn_id)

    return run


def test_observations_are_recorded_listed_and_reflected_on_by_the_agents_model(chronicler):
    _, model, results = chronicler(
        [
            tool_call(
                "observe_record", {"observation": "Answers in French please", "about": "user"}
            ),
            tool_call("observe_record", {"observation": "Asked about invoices twice on Monday"}),
            tool_call("observe_list", {"limit": 5}),
            tool_call("reflect_create", {"focus": "the user's habits"}),
            text(REFLECTION),  # the reflection, written by the agent's own model
            tool_call("reflect_list", {}),
            text("done"),
        ]
    )
    first, second, listed, reflected, reflections = results
    assert first["ok"] and second["ok"]
    assert [o["text"] for o in listed["output"]] == [
        "Observation about the conversation: Asked about invoices twice on Monday",
        "Observation about the user: Answers in French please",
    ]
    assert reflected["output"]["reflection"] == REFLECTION
    assert reflected["output"]["observations"] == 2
    prompt = model.calls[4].messages  # what the model was asked to reflect on
    assert prompt[0].role == "system" and "reflection" in prompt[0].content
    assert "Answers in French please" in prompt[1].content
    assert "Focus on: the user's habits" in prompt[1].content
    assert [r["text"] for r in reflections["output"]] == [f"Reflection: {REFLECTION}"]


def test_a_later_turn_recalls_the_reflection(chronicler):
    chronicler(
        [
            tool_call("observe_record", {"observation": "Prefers French", "about": "user"}),
            tool_call("reflect_create", {}),
            text(REFLECTION),
            text("noted"),
        ]
    )
    _, later, results = chronicler(
        [
            tool_call("memory_agent_recall", {"query": "which language does the user prefer"}),
            text("French"),
        ],
        said="Which language does the user prefer?",
    )
    # The runtime recalled it into the prompt by itself, and the memory tool finds it too.
    assert REFLECTION in later.calls[0].messages[0].content
    assert any(REFLECTION in hit["text"] for hit in results[0]["output"])


def test_observations_belong_to_the_agent_that_recorded_them(chronicler):
    chronicler(
        [tool_call("observe_record", {"observation": "Secret plan: launch on Friday"}), text("ok")]
    )
    _, _, results = chronicler(
        [tool_call("observe_list", {}), tool_call("reflect_create", {}), text("?")],
        agent="scribe",
    )
    listed, reflected = results
    assert listed["output"] == []
    assert reflected["ok"] is False and "no observations" in reflected["error"]


def _has_memory(path: Path) -> bool:
    conn = sqlite3.connect(path)
    try:
        return bool(
            conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memory_entries'").fetchone()
        )
    finally:
        conn.close()


BAD_INPUTS = [
    ("observe_record", {}, "observation"),
    ("observe_record", {"observation": ""}, "observation"),
    ("observe_record", {"observation": "   "}, "observation"),
    ("observe_record", {"observation": "x" * 4_001}, "observation"),
    ("observe_record", {"observation": "ok", "about": "weather"}, "about"),
    ("observe_record", {"observation": "ok", "agent": "vault"}, "agent"),
    ("observe_list", {"limit": 0}, "limit"),
    ("observe_list", {"limit": "ten"}, "limit"),
    ("reflect_create", {"limit": 0}, "limit"),
    ("reflect_create", {"limit": 60}, "limit"),
    ("reflect_create", {"focus": "f" * 301}, "focus"),
    ("reflect_list", {"limit": 51}, "limit"),
]


def test_bad_inputs_are_tool_errors_naming_the_field_and_change_nothing(chronicler):
    runtime, _, _ = chronicler(
        [tool_call("observe_record", {"observation": "a first observation"}), text("ok")],
        extra="[plugins.tools-chronicler]\nmax_observations = 50\n",
    )
    dbs = [p for p in Path(runtime.config.home).rglob("*.db") if _has_memory(p)]

    def snapshot():
        conn = sqlite3.connect(dbs[0])
        try:
            return conn.execute(
                "SELECT * FROM memory_entries WHERE kind IN ('observation', 'reflection') "
                "ORDER BY id"
            ).fetchall()
        finally:
            conn.close()

    before = snapshot()
    assert before
    _, _, results = chronicler(
        [tool_call(name, params) for name, params, _ in BAD_INPUTS] + [text("done")],
        extra="[plugins.tools-chronicler]\nmax_observations = 50\n",
    )
    assert len(results) == len(BAD_INPUTS) >= 10
    for (name, params, field), result in zip(BAD_INPUTS, results, strict=True):
        assert result["ok"] is False, (name, params, result)
        assert field in result["error"], (name, params, result["error"])
    assert snapshot() == before
