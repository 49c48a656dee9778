"""toolang-hook-knowledge-saver: the rules, masking, de-duplication and the memory seam."""

from __future__ import annotations

import collections
import hashlib
import json

import pytest
from knowledge_helpers import KEY, LONG, entries, make_runtime, save, serve

import toolang_hook_knowledge_saver as plugin
from toolang_core import ConfigError, ToolCall, ToolResult
from toolang_core.testing.models import text, tool_call
from toolang_hook_knowledge_saver import keeper, rules


def test_a_real_turn_keeps_a_long_successful_result(toolang_runtime, toolang_scripted_model):
    model = toolang_scripted_model(
        [tool_call("read_doc", {"name": "runbook"}, call_id="c1"), text("read it")]
    )
    runtime = make_runtime(toolang_runtime, "flush_seconds = 3600", model=model)
    (turn_id,) = serve(runtime, "read the runbook")
    (entry,) = entries(runtime)  # written at shutdown
    assert (entry["agent"], entry["tool"], entry["params"]) == (
        "assistant",
        "read_doc",
        '{"name": "runbook"}',
    )
    assert entry["content"] == f"runbook: {LONG}"
    assert (entry["thread_id"], entry["turn_id"], entry["call_id"]) == ("cli:t", turn_id, "c1")
    assert entry["content_hash"] == hashlib.sha256(entry["content"].encode()).hexdigest()
    assert entry["times_seen"] == 1


def test_short_results_are_not_kept(toolang_runtime, toolang_scripted_model):
    model = toolang_scripted_model([tool_call("status"), text("fine")])
    runtime = make_runtime(toolang_runtime, model=model)
    serve(runtime, "status?")
    assert entries(runtime) == []


def test_failed_results_are_not_kept_by_default(toolang_runtime, toolang_scripted_model):
    model = toolang_scripted_model([tool_call("broken_read", {"name": "x"}), text("gone")])
    runtime = make_runtime(toolang_runtime, model=model)
    serve(runtime, "read x")
    assert entries(runtime) == []


def test_failed_results_are_kept_as_their_error_when_asked(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "only_successful = false")
    save(runtime, "broken_read", ToolResult(ok=False, error=f"x is gone; {LONG}"))
    assert entries(runtime)[0]["content"] == f"x is gone; {LONG}"


def test_only_tools_with_a_configured_prefix_are_considered(toolang_runtime):
    runtime = make_runtime(toolang_runtime, 'tool_prefixes = ["read_", "web_"]')
    save(runtime, "read_doc", ToolResult(ok=True, output=LONG))
    save(runtime, "web_fetch", ToolResult(ok=True, output=LONG + "!"))
    save(runtime, "exec_run", ToolResult(ok=True, output=LONG + "?"))
    assert [e["tool"] for e in entries(runtime)] == ["read_doc", "web_fetch"]


def test_include_patterns_select_and_exclude_patterns_reject(toolang_runtime):
    runtime = make_runtime(
        toolang_runtime, 'include = ["(?i)runbook", "owner"]\nexclude = ["DRAFT"]'
    )
    save(runtime, "a", ToolResult(ok=True, output="the RUNBOOK says " + LONG))
    save(runtime, "b", ToolResult(ok=True, output="owner: platform " + LONG.replace("runbook", "")))
    save(runtime, "c", ToolResult(ok=True, output="nothing relevant here " * 10))
    save(runtime, "d", ToolResult(ok=True, output="DRAFT runbook " + LONG))
    assert [e["tool"] for e in entries(runtime)] == ["a", "b"]


def test_secrets_are_masked_in_the_content_and_the_params(toolang_runtime):
    runtime = make_runtime(toolang_runtime)
    output = {"host": "db1", "password": "hunter2", "notes": f"key {KEY}; {LONG}"}
    save(runtime, "lookup", ToolResult(ok=True, output=output), params={"token": KEY, "q": "db1"})
    (entry,) = entries(runtime)
    stored = json.dumps(entry)
    assert KEY not in stored
    assert "hunter2" not in stored
    assert json.loads(entry["params"]) == {"q": "db1", "token": "********"}
    assert json.loads(entry["content"])["password"] == "********"


def test_structured_results_are_kept_as_json(toolang_runtime):
    runtime = make_runtime(toolang_runtime)
    save(runtime, "lookup", ToolResult(ok=True, output={"owner": "platform", "notes": LONG}))
    assert json.loads(entries(runtime)[0]["content"]) == {"owner": "platform", "notes": LONG}


def test_long_content_is_cut_at_max_chars_and_hashed_whole(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "max_chars = 100")
    whole = "x" * 250
    save(runtime, "read_doc", ToolResult(ok=True, output=whole))
    (entry,) = entries(runtime)
    assert (len(entry["content"]), entry["content_chars"]) == (100, 250)
    assert entry["content_hash"] == hashlib.sha256(whole.encode()).hexdigest()


def test_the_same_result_is_stored_once_per_agent(toolang_runtime):
    runtime = make_runtime(toolang_runtime)
    for agent in ("assistant", "assistant", "operator"):
        save(runtime, "read_doc", ToolResult(ok=True, output=LONG), agent=agent)
    first, other = entries(runtime)
    assert (first["agent"], first["times_seen"]) == ("assistant", 2)
    assert first["last_seen_at"] >= first["created_at"]
    assert (other["agent"], other["times_seen"]) == ("operator", 1)


def test_odd_values_are_kept_without_raising(toolang_runtime):
    runtime = make_runtime(toolang_runtime)
    looped: list = [LONG]
    looped.append(looped)

    class Odd:
        pass

    ctx = Odd()
    ctx.runtime = runtime
    result = ToolResult(ok=True, output=looped)
    plugin.toolang_save_knowledge(ToolCall("c", "read_doc", {"when": object()}), result, ctx)
    plugin.toolang_save_knowledge(object(), object(), ctx)  # not ok: nothing to keep
    plugin.keeper_of(runtime).writer.flush()
    (entry,) = entries(runtime)
    assert (entry["agent"], entry["thread_id"], entry["tool"]) == ("?", "", "read_doc")
    assert LONG in entry["content"]
    assert "object object at" in entry["params"]


def test_a_result_redact_cannot_rebuild_is_masked_as_text(toolang_runtime):
    runtime = make_runtime(toolang_runtime)
    Row = collections.namedtuple("Row", ["key", "notes"])
    save(runtime, "lookup", ToolResult(ok=True, output=Row(KEY, LONG)))
    (entry,) = entries(runtime)
    assert json.loads(entry["content"]) == ["********", LONG]


def test_every_kept_entry_leaves_through_remember(toolang_runtime, monkeypatch):
    """The seam a memory plugin will use: nothing is written any other way."""
    runtime = make_runtime(toolang_runtime)
    handed = []
    monkeypatch.setattr(keeper, "remember", lambda rt, entry: handed.append((rt, entry)))
    save(runtime, "read_doc", ToolResult(ok=True, output=LONG))
    assert [(rt, e.tool, e.content) for rt, e in handed] == [(runtime, "read_doc", LONG)]
    assert entries(runtime) == []


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            'include = ["ok", "("]',
            "plugins.hook-knowledge-saver: include[1]: '(' is not a valid regular expression "
            "(missing ), unterminated subpattern at position 0)",
        ),
        (
            'exclude = ["[a-"]',
            "plugins.hook-knowledge-saver: exclude[0]: '[a-' is not a valid regular expression",
        ),
        ("min_chars = 0", "plugins.hook-knowledge-saver: min_chars: expected a number >= 1"),
        ('tool_prefixes = "read_"', "plugins.hook-knowledge-saver.tool_prefixes: expected an"),
    ],
)
def test_bad_settings_are_config_errors_naming_the_key(toolang_runtime, setting, message):
    with pytest.raises(ConfigError) as caught:
        make_runtime(toolang_runtime, setting)
    assert message in str(caught.value)


TEXT_LENGTH_CASES = [
    None,
    "",
    "plain words",
    {"text": "hello world", "length": 11},
    {"b": [1, 2.5, True, False, None], "a": {"nested": ["x", "y"]}, "": []},
    [],
    {},
    ("a", "tuple"),
    3.25,
    True,
    10**30,
    float("nan"),
    'a "quoted" word',
    "back\\slash",
    "two\nlines",
    "tab\there",
    "non-breaking\xa0space",
    "naïve café ✓",
    {1: "an int key"},
    {"a": {"b": {"c": {"d": [[[[["deep"]]]]]}}}},
    collections.OrderedDict(a=1),
    b"bytes",
]


@pytest.mark.parametrize("value", TEXT_LENGTH_CASES, ids=repr)
def test_a_result_is_told_shorter_than_a_limit_only_when_its_text_is(value):
    length = len(rules.as_text(value))
    told = {limit for limit in range(length + 3) if rules.shorter_than(value, limit)}
    assert told <= set(range(length + 1, length + 3))  # never when the text is not shorter


@pytest.mark.parametrize(
    "value",
    [
        None,
        "plain words",
        {"text": "hello world", "length": 11},
        {"b": [1, 2.5, True, False, None], "a": {"nested": ["x", "y"]}, "": []},
        [],
        ("a", "tuple"),
        3.25,
        "naïve café ✓",
    ],
    ids=repr,
)
def test_plain_json_results_are_measured_exactly_without_building_their_text(value):
    length = len(rules.as_text(value))
    assert (rules.shorter_than(value, length), rules.shorter_than(value, length + 1)) == (
        False,
        True,
    )
