"""The AGENT.md parser every AGENT.md source shares."""

from __future__ import annotations

from toolang_core import AgentDefinition, parse_agent_md

FULL = """\
---
name: code-reviewer
description: "Reviews code --- carefully"
prefixes: [review_*]
tools: [fs_read]
keywords: [review, code quality]
capabilities: [code-review]
model: llm/gpt-4o-mini
session_isolation: true
status: disabled
max_steps: 7
max_delegation_rounds: 0
---
You review code.

---

A rule above is in the instruction.
"""


def parse(text, **kw):
    kw.setdefault("origin", "/a/code-reviewer/AGENT.md")
    return parse_agent_md(text, source="user", **kw)


def test_every_key_reaches_the_definition_and_the_body_is_the_instruction():
    (definition,) = parse(FULL, expected_name="code-reviewer").definitions
    assert definition == AgentDefinition(
        name="code-reviewer",
        description="Reviews code --- carefully",
        instruction="You review code.\n\n---\n\nA rule above is in the instruction.",
        model="llm/gpt-4o-mini",
        prefixes=("review_*",),
        tools=("fs_read",),
        keywords=("review", "code quality"),
        capabilities=("code-review",),
        session_isolation=True,
        max_steps=7,
        max_delegation_rounds=0,
        status="disabled",
        source="user",
        origin="/a/code-reviewer/AGENT.md",
    )


def test_a_byte_order_mark_is_tolerated():
    assert parse("\ufeff---\nname: x\n---\nHi.\n").definitions[0].name == "x"


def test_all_errors_of_one_file_are_reported_at_once_with_their_lines():
    loaded = parse("---\nname: x\nkeywords: review\nmax_steps: 0\n---\nHi.\n")
    assert loaded.definitions == ()
    assert [(d.line, d.level) for d in loaded.diagnostics] == [(3, "error"), (4, "error")]


def test_an_empty_instruction_is_a_warning_only():
    loaded = parse("---\nname: x\n---\n")
    assert loaded.definitions[0].name == "x"
    assert [d.message for d in loaded.diagnostics] == [
        "no instruction after the front matter; a generic one is used"
    ]


def test_front_matter_that_is_not_keys_is_an_error():
    (error,) = parse("---\n- a list\n---\nHi.\n").diagnostics
    assert (error.line, error.message) == (2, "the front matter must be keys, found a list")
