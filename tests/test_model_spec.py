"""Model names are checked at the door: ``provider`` or ``provider/model-id``."""

from __future__ import annotations

import pytest

from toolang_core.models.spec import model_spec_problem


@pytest.mark.parametrize(
    "spec",
    ["demo", "scripted", "llm/gpt-4o-mini", "llm/claude-3.5:latest", "llm/ollama/llama3@q4"],
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
    ],
)
def test_malformed_model_names_are_refused_with_what_was_expected(spec):
    problem = model_spec_problem(spec)
    assert problem is not None
    assert problem.startswith("expected a model name 'provider' or 'provider/model-id'")
