"""``toolang knowledge list|show``, run as a real subprocess over the plugin's database."""

from __future__ import annotations

import json

from knowledge_helpers import LONG, make_runtime, save

from toolang_core import ToolResult

ONLY_THIS_PLUGIN = {"TOOLANG_LOAD_PLUGINS": "hook-knowledge-saver"}


def knowledge(toolang_cli, *args):
    return toolang_cli("knowledge", *args, env=ONLY_THIS_PLUGIN)


def saved(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "max_chars = 100")
    save(runtime, "read_doc", ToolResult(ok=True, output=f"first {LONG}"), params={"n": 1})
    save(runtime, "lookup", ToolResult(ok=True, output=f"second {LONG}"), agent="operator")
    save(runtime, "read_doc", ToolResult(ok=True, output=f"third {LONG}"))
    return runtime


def test_list_without_a_database_says_nothing_was_saved(toolang_cli):
    done = knowledge(toolang_cli, "list")
    assert (done.returncode, done.stdout.strip()) == (
        0,
        "no knowledge saved yet: it is saved while `toolang run` serves turns",
    )
    assert json.loads(knowledge(toolang_cli, "list", "--json").stdout) == []


def test_list_shows_the_newest_entries_first(toolang_cli, toolang_runtime):
    saved(toolang_runtime)
    done = knowledge(toolang_cli, "list")
    header, *lines = done.stdout.splitlines()
    assert header.split() == ["ID", "AGENT", "TOOL", "SEEN", "LAST", "SEEN", "CONTENT"]
    assert [line.split()[:4] for line in lines] == [
        ["3", "assistant", "read_doc", "1"],
        ["2", "operator", "lookup", "1"],
        ["1", "assistant", "read_doc", "1"],
    ]
    assert "third The deploy runbook" in lines[0]


def test_list_narrows_to_one_agent_and_limits(toolang_cli, toolang_runtime):
    saved(toolang_runtime)
    listed = json.loads(knowledge(toolang_cli, "list", "--agent", "assistant", "--json").stdout)
    assert [(e["id"], e["tool"]) for e in listed] == [(3, "read_doc"), (1, "read_doc")]
    newest = json.loads(knowledge(toolang_cli, "list", "--limit", "1", "--json").stdout)
    assert [e["id"] for e in newest] == [3]
    none = knowledge(toolang_cli, "list", "--agent", "nobody")
    assert none.stdout.strip() == "no knowledge saved for agent 'nobody'"


def test_show_prints_one_entry_with_its_content(toolang_cli, toolang_runtime):
    saved(toolang_runtime)
    done = knowledge(toolang_cli, "show", "1")
    assert done.returncode == 0, done.stderr
    assert "agent:  assistant" in done.stdout
    assert 'params: {"n": 1}' in done.stdout
    assert "turn:   turn-1" in done.stdout
    content = done.stdout.split(f"content (cut from {len('first ' + LONG)} characters):\n")[1]
    assert content.strip() == f"first {LONG}"[:99] + "…"


def test_show_json_has_every_field(toolang_cli, toolang_runtime):
    saved(toolang_runtime)
    entry = json.loads(knowledge(toolang_cli, "show", "2", "--json").stdout)
    assert (entry["id"], entry["agent"], entry["tool"], entry["times_seen"]) == (
        2,
        "operator",
        "lookup",
        1,
    )
    assert len(entry["content_hash"]) == 64


def test_show_an_unknown_id_fails_naming_it(toolang_cli, toolang_runtime):
    saved(toolang_runtime)
    done = knowledge(toolang_cli, "show", "42")
    assert done.returncode == 1
    assert "no knowledge entry 42; `toolang knowledge list` shows the ids there are" in done.stderr


def test_show_without_a_database_fails_naming_the_id(toolang_cli):
    done = knowledge(toolang_cli, "show", "1")
    assert done.returncode == 1
    assert "no knowledge entry 1: no knowledge saved yet" in done.stderr
