"""Model names are checked at the door: ``provider`` or ``provider/model-id``."""

from __future__ import annotations

import pytest

from toolang_core.models.spec import model_spec_problem


@pytest.mark.parametrize(
    "spec",
    [
        "demo",
        "scripted",
        "llm/gpt-4o-mini",
        "llm/claude-3.5:latest",
        "llm/ollama/llama3@q4",
        "a2a/http://127.0.0.1:40009",  # a remote agent, named by its endpoint
        "a2a/https://agents.example.org/a2a/polyglot",
    ],
)
def test_well_formed_model_names_pass(spec):
    assert model_spec_problem(spec) is None


@pytest.mark.parametrize(
    "spec",
    [
        "llm/../../etc/passwd",
        "llm/./x",
        "llm/",
        "llm//x",
        "/etc/passwd",
        "LLM/x",
        "llm/x y",
        "llm/x\x00",
        "",
        "llm/" + "x" * 300,
        "a2a/http://host/../etc/passwd",
        "a2a/http://host/a/./b",
        "a2a/file:///etc/passwd",
        "a2a/http://host/x?y=1",
        "a2a/http://",
    ],
)
def test_malformed_model_names_are_refused_with_what_was_expected(spec):
    problem = model_spec_problem(spec)
    assert problem is not None
    assert problem.startswith("expected a model name 'provider' or 'provider/model-id'")
