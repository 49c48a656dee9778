"""The ontologist role with its own tools, end to end: a turn routed to the built-in
``ontologist`` agent (its ``ontology_*`` prefix claims the tools) defines types, ingests
a CSV with a bad row, meets a contradicting fact, resolves it and queries the result —
a scripted model calling the tools through the whole chain, visible in the trace."""

from __future__ import annotations

import toolang_agents_builtin
import toolang_tools_ontologist
from toolang_core.testing.cli import run_toolang
from toolang_core.testing.models import ScriptedModel, text, tool_call
from toolang_core.testing.runtimes import run_turn, tool_results

PEOPLE = "id,name,age,company\np1,Ada,36,acme\np2,Bob,abc,acme\np3,Cy,41,acme\n"


def test_the_ontologist_ingests_finds_a_conflict_resolves_it_and_answers(toolang_runtime, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "people.csv").write_text(PEOPLE)
    person = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name"],
    }
    model = ScriptedModel(
        [
            tool_call(
                "ontology_define_type",
                {"name": "Company", "attributes": {"properties": {"name": {"type": "string"}}}},
            ),
            tool_call(
                "ontology_define_type",
                {
                    "name": "Person",
                    "attributes": person,
                    "relations": {"works_for": {"target": "Company"}},
                },
            ),
            tool_call(
                "ontology_add_entity",
                {"type": "Company", "key": "acme", "attributes": {"name": "Acme"}},
            ),
            tool_call(
                "ontology_ingest",
                {
                    "path": "people.csv",
                    "mapping": {
                        "type": "Person",
                        "key": "id",
                        "label": "name",
                        "attributes": {"name": "name", "age": "age"},
                        "relations": {"works_for": "company"},
                    },
                },
            ),
            tool_call(
                "ontology_assert_fact",
                {
                    "subject": "p1",
                    "predicate": "age",
                    "object": 37,
                    "source": "crm",
                    "confidence": 0.5,
                },
            ),
            tool_call("ontology_conflicts", {}),
            tool_call(
                "ontology_resolve",
                {"subject": "p1", "predicate": "age", "strategy": "most_confident"},
            ),
            tool_call("ontology_query", {"predicate": "works_for", "object": "acme", "depth": 1}),
            text("Ada is 36; two people work for Acme; line 3 was rejected."),
        ]
    )
    runtime = toolang_runtime(
        f'[models]\ndefault = "scripted"\n[plugins.tools-ontologist]\ningest_root = "{data}"\n',
        plugins={
            "agents-builtin": toolang_agents_builtin,
            "tools-ontologist": toolang_tools_ontologist,
            "scripted": model.plugin(),
        },
    )
    scope = runtime.agents.scope(runtime.agents.agent("ontologist"))
    assert {t for t in scope if t.startswith("ontology_")} == {
        t.name for t in toolang_tools_ontologist.tools.TOOLS
    }
    turn_id = run_turn(runtime, "model our people", agent="ontologist")
    results = tool_results(runtime, turn_id)
    assert all(r["ok"] for r in results), results
    outputs = [r["output"] for r in results]
    ingested, asserted, found, resolved, answer = outputs[3:]
    assert (ingested["accepted"], ingested["rejected"]) == (
        2,
        [{"line": 3, "error": "column 'age': expected integer, found 'abc'"}],
    )
    assert asserted["conflicts_with"] == 1
    assert [(c["subject"], c["predicate"]) for c in found["conflicts"]] == [("p1", "age")]
    assert resolved["kept"]["object"] == 36
    assert {f["subject"] for f in answer["facts"] if f["depth"] == 0} == {"p1", "p3"}
    assert {f["object"] for f in answer["facts"] if f["predicate"] == "age"} == {36, 41}

    trace = run_toolang("turns", "trace", turn_id, cwd=runtime.config.base_dir)
    assert trace.returncode == 0, trace.stderr
    for call in ("ontology_ingest(", "ontology_resolve(", "ontology_query("):
        (line,) = [ln for ln in trace.stdout.splitlines() if ln.strip().startswith(call)]
        assert "→ ok" in line, line
