"""The ontologist's tools through the whole chain: traversal, owners, bad input, replays."""

from __future__ import annotations

import os
import sqlite3
import types
from pathlib import Path

from ontology_helpers import COMPANY, PERSON, outputs

import toolang_tools_ontologist as plugin
from toolang_core.testing.models import text, tool_call
from toolang_core.testing.races import swapping_for_a_link
from toolang_core.testing.runtimes import run_turn, tool_call_context, tool_results
from toolang_tools_ontologist.common import OntologyError
from toolang_tools_ontologist.tools import TOOLS

TYPES = [
    tool_call("ontology_define_type", {"name": "Company", "attributes": COMPANY}),
    tool_call(
        "ontology_define_type",
        {
            "name": "Person",
            "attributes": PERSON,
            "relations": {
                "works_for": {"target": "Company"},
                "knows": {"target": "Person", "many": True},
            },
        },
    ),
]
GRAPH = [
    *TYPES,
    tool_call(
        "ontology_add_entity",
        {"type": "Company", "key": "acme", "attributes": {"name": "Acme", "city": "Oslo"}},
    ),
    tool_call(
        "ontology_add_entity", {"type": "Person", "key": "ada", "attributes": {"name": "Ada"}}
    ),
    tool_call(
        "ontology_add_entity", {"type": "Person", "key": "bob", "attributes": {"name": "Bob"}}
    ),
    tool_call("ontology_add_entity", {"type": "Person", "key": "cy", "attributes": {"name": "Cy"}}),
    tool_call("ontology_assert_fact", {"subject": "ada", "predicate": "knows", "object": "bob"}),
    tool_call("ontology_assert_fact", {"subject": "bob", "predicate": "knows", "object": "cy"}),
    tool_call("ontology_assert_fact", {"subject": "cy", "predicate": "knows", "object": "ada"}),
    tool_call(
        "ontology_assert_fact", {"subject": "cy", "predicate": "works_for", "object": "acme"}
    ),
]


def test_every_tool_lands_with_its_prefix_and_is_declared_idempotent():
    assert {t.name for t in TOOLS} == {
        "ontology_define_type",
        "ontology_add_entity",
        "ontology_assert_fact",
        "ontology_query",
        "ontology_conflicts",
        "ontology_resolve",
        "ontology_ingest",
    }
    assert all(t.idempotent for t in TOOLS)


def test_query_follows_relations_hop_by_hop_up_to_the_depth_and_stops_at_cycles(ontologist):
    *_, results = ontologist(
        [
            *GRAPH,
            tool_call("ontology_query", {"subject": "ada", "predicate": "knows"}),
            tool_call("ontology_query", {"subject": "ada", "predicate": "knows", "depth": 1}),
            tool_call("ontology_query", {"subject": "ada", "depth": 5}),
            tool_call("ontology_query", {"predicate": "city", "object": "Oslo"}),
            tool_call("ontology_query", {"object": "acme", "depth": 1}),
        ]
    )
    flat, one, deep, oslo, at_acme = outputs(results)[-5:]
    assert [(f["subject"], f["object"], f["depth"]) for f in flat["facts"]] == [("ada", "bob", 0)]
    assert {(f["subject"], f["predicate"], f["depth"]) for f in one["facts"]} == {
        ("ada", "knows", 0),
        ("ada", "name", 1),
        ("bob", "name", 1),
        ("bob", "knows", 1),
    }
    hops = {(f["subject"], f["predicate"]): f["depth"] for f in deep["facts"]}
    assert hops == {
        ("ada", "name"): 0,
        ("ada", "knows"): 0,
        ("bob", "name"): 1,
        ("bob", "knows"): 1,
        ("cy", "name"): 2,
        ("cy", "knows"): 2,
        ("cy", "works_for"): 2,
        ("acme", "name"): 3,
        ("acme", "city"): 3,
    }
    assert len(deep["facts"]) == len(hops)  # each fact once, the cycle back to ada ends
    assert deep["entities"]["acme"] == {"type": "Company", "label": "acme"}
    assert [f["subject"] for f in oslo["facts"]] == ["acme"]
    assert {(f["subject"], f["depth"]) for f in at_acme["facts"]} >= {("cy", 0), ("acme", 1)}


def test_each_owner_has_an_ontology_of_its_own(ontologist):
    ontologist(GRAPH)
    _, _, results = ontologist(
        [
            tool_call("ontology_query", {"subject": "ada"}),
            tool_call("ontology_add_entity", {"type": "Person", "key": "ada"}),
            *TYPES,
            tool_call(
                "ontology_add_entity",
                {"type": "Person", "key": "ada", "attributes": {"name": "Bob's Ada"}},
            ),
        ],
        owner="bob",
    )
    nothing, no_type, *_, own = results
    assert nothing["output"]["facts"] == []
    assert (
        no_type["ok"] is False
        and "type 'Person' is not defined; expected one of []" in (no_type["error"])
    )
    assert own["output"]["created"] is True
    _, _, results = ontologist(
        [tool_call("ontology_query", {"subject": "ada", "predicate": "name"})]
    )
    assert [f["object"] for f in results[0]["output"]["facts"]] == ["Ada"]


BAD_INPUTS = [
    (
        "ontology_add_entity",
        {"type": "Robot", "key": "r1"},
        "type 'Robot' is not defined; expected one of ['Company', 'Person']",
    ),
    (
        "ontology_add_entity",
        {"type": "Person", "key": "p1", "attributes": {"name": "P", "age": "old"}},
        "attributes of 'p1' (type 'Person'): age must be integer",
    ),
    (
        "ontology_add_entity",
        {"type": "Person", "key": "p1", "attributes": {"age": 3}},
        "must contain ['name'] properties",
    ),
    (
        "ontology_add_entity",
        {"type": "Person", "key": "p1", "attributes": {"name": "P", "shoe": 9}},
        "'shoe' is not an attribute of type 'Person'",
    ),
    (
        "ontology_add_entity",
        {"type": "Company", "key": "ada", "attributes": {"name": "X"}},
        "entity 'ada' exists as a 'Person', not a 'Company'",
    ),
    ("ontology_add_entity", {"type": "Person", "key": "bad key"}, "key"),
    (
        "ontology_assert_fact",
        {"subject": "ada", "predicate": "height", "object": 1},
        "type 'Person' has no such attribute or relation; expected one of",
    ),
    (
        "ontology_assert_fact",
        {"subject": "nobody", "predicate": "name", "object": "x"},
        "subject 'nobody' is not an entity",
    ),
    (
        "ontology_assert_fact",
        {"subject": "ada", "predicate": "works_for", "object": "bob"},
        "'bob' is a 'Person'; expected the key of a 'Company' entity",
    ),
    (
        "ontology_assert_fact",
        {"subject": "ada", "predicate": "email", "object": "nope"},
        "object of 'email' (type 'Person'): email must match pattern",
    ),
    (
        "ontology_assert_fact",
        {"subject": "ada", "predicate": "name", "object": "x", "at": "May"},
        "at: 'May' is not a time; expected ISO 8601",
    ),
    (
        "ontology_define_type",
        {"name": "Person", "attributes": {"properties": {}}},
        "type 'Person' is already defined otherwise",
    ),
    (
        "ontology_define_type",
        {"name": "T", "attributes": {"properties": {"x": {"$ref": "http://evil/s.json"}}}},
        "$ref 'http://evil/s.json' leaves the schema",
    ),
    (
        "ontology_define_type",
        {"name": "T", "attributes": {"properties": {"x": {"type": "bogus"}}}},
        "not a valid JSON Schema",
    ),
    (
        "ontology_define_type",
        {"name": "T", "attributes": {"type": "string"}},
        'expected "type": "object"',
    ),
    (
        "ontology_define_type",
        {"name": "T", "attributes": {"properties": {"Bad Name": {}}}},
        "attribute name 'Bad Name' is not a predicate",
    ),
    (
        "ontology_define_type",
        {"name": "T", "attributes": {}, "relations": {"owns": {"target": "Car"}}},
        "target 'Car' is not a defined type",
    ),
    ("ontology_define_type", {"name": "bad name", "attributes": {}}, "name"),
    ("ontology_query", {}, "give a subject, a predicate or an object"),
    ("ontology_query", {"subject": "ada", "depth": 9}, "depth: expected at most 5"),
    (
        "ontology_resolve",
        {"subject": "ada", "predicate": "name", "strategy": "newest"},
        "no conflict to resolve",
    ),
    (
        "ontology_resolve",
        {"subject": "ada", "predicate": "name", "keep": 1, "strategy": "newest"},
        "not both",
    ),
    (
        "ontology_ingest",
        {
            "content": "id,full\np9,X\n",
            "mapping": {"type": "Person", "key": "id", "attributes": {"name": "name"}},
        },
        "mapping.attributes.name names the column 'name', which the data does not have; "
        "expected one of ['id', 'full']",
    ),
    (
        "ontology_ingest",
        {"content": "id\np9\n", "mapping": {"type": "Robot", "key": "id"}},
        "type 'Robot' is not defined",
    ),
    (
        "ontology_ingest",
        {
            "content": "id\np9\n",
            "mapping": {"type": "Person", "key": "id", "attributes": {"height": "id"}},
        },
        "'height' is not an attribute of type 'Person'",
    ),
    ("ontology_ingest", {"content": "id\np9\n", "mapping": {"type": "Person"}}, "key"),
    (
        "ontology_ingest",
        {"path": "../outside.csv", "mapping": {"type": "Person", "key": "id"}},
        "is outside the ingest root",
    ),
    (
        "ontology_ingest",
        {"path": "missing.csv", "mapping": {"type": "Person", "key": "id"}},
        "is not a file under the ingest root",
    ),
    (
        "ontology_ingest",
        {"content": "[1,", "format": "json", "mapping": {"type": "Person", "key": "id"}},
        "the JSON cannot be read",
    ),
]


def test_bad_input_is_a_tool_error_naming_what_was_expected_and_changes_nothing(ontologist):
    runtime, _, _ = ontologist(GRAPH)
    db = Path(runtime.config.home) / "plugins" / "tools-ontologist.db"

    def snapshot():
        conn = sqlite3.connect(db)
        try:
            return [
                conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
                for t in ("types", "entities", "facts", "resolutions")
            ]
        finally:
            conn.close()

    kept = snapshot()
    _, _, results = ontologist([tool_call(name, params) for name, params, _ in BAD_INPUTS])
    assert len(results) == len(BAD_INPUTS)
    for (name, params, expected), result in zip(BAD_INPUTS, results, strict=True):
        assert result["ok"] is False, (name, params, result)
        assert expected in result["error"], (name, params, result["error"])
    assert snapshot() == kept


def test_a_writing_call_made_again_with_its_key_gets_the_same_answer_and_writes_nothing(
    ontologist,
):
    """What a turn resumed after a crash does with a call in doubt: run it again under
    the same idempotency key."""
    runtime, _, _ = ontologist(GRAPH)
    turn = types.SimpleNamespace(owner="alice")
    tools = {t.name: t.function for t in TOOLS}

    def call(name, key, **params):
        context = tool_call_context(runtime, name, params, turn=turn, idempotency_key=key)
        return tools[name](**params, context=context)

    first = call("ontology_assert_fact", "k1", subject="ada", predicate="name", object="Ada L.")
    again = call("ontology_assert_fact", "k1", subject="ada", predicate="name", object="Ada L.")
    assert first == again == {"id": first["id"], "added": True, "conflicts_with": 1}
    resolved = call("ontology_resolve", "k2", subject="ada", predicate="name", strategy="newest")
    assert call("ontology_resolve", "k2", subject="ada", predicate="name", strategy="newest") == (
        resolved
    )
    content = "id,name\nz1,Zed\nz2,Zoe\n"
    mapping = {"type": "Person", "key": "id", "attributes": {"name": "name"}}
    ingested = call("ontology_ingest", "k3", content=content, mapping=mapping)
    assert call("ontology_ingest", "k3", content=content, mapping=mapping) == ingested
    conn = sqlite3.connect(Path(runtime.config.home) / "plugins" / "tools-ontologist.db")
    counts = conn.execute(
        "SELECT (SELECT COUNT(*) FROM facts WHERE subject = 'ada' AND predicate = 'name'), "
        "(SELECT COUNT(*) FROM resolutions), (SELECT COUNT(*) FROM entities WHERE key LIKE 'z%')"
    ).fetchone()
    assert counts == (2, 1, 2)


def test_the_plugin_registers_its_settings_and_tools():
    assert plugin.NAME == "tools-ontologist"


def test_a_type_is_redefined_only_when_every_entity_still_fits(ontologist):
    relations = TYPES[1].tool_calls[0].params["relations"]
    strict = {**PERSON, "required": ["name", "age"]}
    looser = {**PERSON, "properties": {**PERSON["properties"], "nick": {"type": "string"}}}
    _, _, results = ontologist(
        [
            *GRAPH,
            tool_call("ontology_define_type", {"name": "Person", "attributes": looser,
                                               "replace": True}),
            tool_call("ontology_define_type", {"name": "Person", "attributes": strict,
                                               "relations": relations, "replace": True}),
            tool_call("ontology_define_type", {"name": "Person", "attributes": looser,
                                               "relations": relations, "replace": True}),
            tool_call("ontology_assert_fact", {"subject": "ada", "predicate": "nick",
                                               "object": "Countess"}),
        ]
    )  # fmt: skip
    dropped, refused, replaced, nick = results[-4:]
    assert dropped["ok"] is False and "cannot drop 'knows'" in dropped["error"]
    assert refused["ok"] is False and "entity 'ada' would not fit" in refused["error"]
    assert "(the attributes must contain ['age'] properties)" in refused["error"]
    assert replaced["ok"] and replaced["output"]["replaced"] is True
    assert nick["ok"] and nick["output"]["added"] is True


def test_ingest_reads_only_files_reached_through_the_ingest_root(ontologist, tmp_path):
    """A path is opened beneath the root (links followed only while they stay in it),
    so a link swapped in after a check cannot lead the read out of it."""
    root = ontologist.root
    secret = tmp_path / "secret.csv"
    secret.write_text("id\nsecret-row\n")
    (root / "rows.csv").write_text("id\nr1\n")
    (root / "inner").mkdir()
    (root / "inner" / "link.csv").symlink_to("../rows.csv")
    (root / "out.csv").symlink_to(secret)
    (root / "out-rel.csv").symlink_to("../secret.csv")
    (root / "dir.csv").mkdir()
    os.mkfifo(root / "pipe.csv")  # a read of it by name would block forever
    mapping = {"type": "Person", "key": "id"}
    _, _, results = ontologist(
        [
            *TYPES,
            *(
                tool_call("ontology_ingest", {"path": p, "mapping": mapping, "dry_run": True})
                for p in ("inner/link.csv", "out.csv", "out-rel.csv", "dir.csv", "pipe.csv")
            ),
        ]
    )
    inside, out, out_rel, directory, pipe = results[-5:]
    assert inside["ok"] is True, inside
    for result in (out, out_rel):
        assert result["ok"] is False and "is outside the ingest root" in result["error"], result
        assert "secret-row" not in str(result)
    for result in (directory, pipe):
        assert result["ok"] is False and "is not a file under the ingest root" in result["error"]


def test_an_ingest_root_configured_as_a_link_takes_absolute_paths_written_through_it(
    toolang_runtime, toolang_scripted_model, tmp_path
):
    """``ingest_root`` names a link to the data: an absolute path written through it is
    inside the root; one that leads out through it is refused."""
    real = tmp_path / "share" / "data"
    real.mkdir(parents=True)
    (real / "rows.csv").write_text("id\nr1\n")
    (tmp_path / "share" / "secret.csv").write_text("id\nsecret-row\n")
    root = tmp_path / "data"
    root.symlink_to(real)
    mapping = {"type": "Person", "key": "id"}
    model = toolang_scripted_model(
        [
            *TYPES,
            *(
                tool_call("ontology_ingest", {"path": p, "mapping": mapping, "dry_run": True})
                for p in (f"{root}/rows.csv", f"{root}/../secret.csv")
            ),
            text("done"),
        ]
    )
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n[agents]\nmax_steps = 100\n'
        f'[plugins.tools-ontologist]\ningest_root = "{root}"\n',
        plugins={"tools-ontologist": plugin, "scripted": model.plugin()},
    )
    inside, out = tool_results(runtime, run_turn(runtime))[-2:]
    assert inside["ok"] is True, inside
    assert out["ok"] is False and "is outside the ingest root" in out["error"], out
    assert "secret-row" not in str(out)


def test_a_name_swapped_for_a_link_out_is_never_read(ontologist, tmp_path):
    """A thread swaps ``x.csv`` between a file and a link to a secret outside the root
    as fast as it can while ingest reads it: the secret is never read (checking the
    resolved path, then opening it by name, read it now and then)."""
    from toolang_tools_ontologist import tools as ontology_tools

    runtime, _, _ = ontologist([])
    context = tool_call_context(
        runtime, "ontology_ingest", {}, turn=types.SimpleNamespace(owner="alice")
    )
    root = ontologist.root
    secret = tmp_path / "credential"
    secret.write_text("id\nSECRET-VALUE\n")
    seen: set[str] = set()
    with swapping_for_a_link(root / "x.csv", secret, "id\nbenign\n"):
        for _ in range(1500):
            try:
                seen.add(ontology_tools._read_file(context, "x.csv"))
            except OntologyError as exc:  # refused (a link out), or missing for an instant
                seen.add(str(exc))
    assert "id\nbenign\n" in seen
    assert not [s for s in seen if "SECRET" in s], seen
