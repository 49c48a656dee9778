"""Conflict detection and resolution on a seeded set, through the whole tool chain."""

from __future__ import annotations

from ontology_helpers import COMPANY, PERSON, outputs

from toolang_core.testing.models import tool_call

SEED = [
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
    tool_call(
        "ontology_add_entity", {"type": "Company", "key": "acme", "attributes": {"name": "Acme"}}
    ),
    tool_call(
        "ontology_add_entity",
        {"type": "Company", "key": "globex", "attributes": {"name": "Globex"}},
    ),
    tool_call(
        "ontology_add_entity",
        {
            "type": "Person",
            "key": "ada",
            "source": "hr",
            "confidence": 0.9,
            "at": "2024-01-01",
            "attributes": {"name": "Ada", "age": 36, "tags": ["math"]},
        },
    ),
    tool_call(
        "ontology_add_entity", {"type": "Person", "key": "bob", "attributes": {"name": "Bob"}}
    ),
    # ada's age: a second source disagrees (conflict), a third agrees with hr (no new object)
    tool_call(
        "ontology_assert_fact",
        {
            "subject": "ada",
            "predicate": "age",
            "object": 37,
            "source": "crm",
            "confidence": 0.6,
            "at": "2024-06-01",
        },
    ),
    tool_call(
        "ontology_assert_fact",
        {
            "subject": "ada",
            "predicate": "age",
            "object": 36,
            "source": "badge",
            "confidence": 0.8,
            "at": "2023-01-01",
        },
    ),
    # many-valued: never a conflict
    tool_call("ontology_assert_fact", {"subject": "ada", "predicate": "tags", "object": "logic"}),
    tool_call("ontology_assert_fact", {"subject": "ada", "predicate": "knows", "object": "bob"}),
    # a single-valued relation with two targets: a conflict
    tool_call(
        "ontology_assert_fact",
        {
            "subject": "bob",
            "predicate": "works_for",
            "object": "acme",
            "source": "hr",
            "at": "2022-01-01",
        },
    ),
    tool_call(
        "ontology_assert_fact",
        {
            "subject": "bob",
            "predicate": "works_for",
            "object": "globex",
            "source": "linkedin",
            "at": "2024-03-01",
        },
    ),
    # the same fact again from the same source: kept once
    tool_call(
        "ontology_assert_fact",
        {
            "subject": "bob",
            "predicate": "works_for",
            "object": "globex",
            "source": "linkedin",
            "at": "2024-03-01",
        },
    ),
    # bob's name, three ways
    tool_call(
        "ontology_assert_fact",
        {
            "subject": "bob",
            "predicate": "name",
            "object": "Robert",
            "source": "crm",
            "confidence": 0.95,
        },
    ),
    tool_call(
        "ontology_assert_fact",
        {
            "subject": "bob",
            "predicate": "name",
            "object": "Bobby",
            "source": "chat",
            "confidence": 0.3,
        },
    ),
    tool_call("ontology_conflicts", {}),
]


def test_conflicts_are_the_single_valued_predicates_with_disagreeing_active_facts(ontologist):
    *_, results = ontologist(SEED)
    out = outputs(results)
    again, same = out[-4], out[-5]
    assert again == {"id": same["id"], "added": False, "conflicts_with": 1}
    assert out[6]["conflicts_with"] == 1 and out[7] == {
        "id": out[7]["id"],
        "added": True,
        "conflicts_with": 1,
    }
    found = out[-1]
    assert found["truncated"] is False
    assert [(c["subject"], c["predicate"]) for c in found["conflicts"]] == [
        ("ada", "age"),
        ("bob", "name"),
        ("bob", "works_for"),
    ]
    age = found["conflicts"][0]["facts"]
    assert [(f["object"], f["source"], f["confidence"]) for f in age] == [
        (36, "hr", 0.9),
        (37, "crm", 0.6),
        (36, "badge", 0.8),
    ]
    works = found["conflicts"][2]["facts"]
    assert [(f["object"], f["kind"], f["at"]) for f in works] == [
        ("acme", "entity", "2022-01-01T00:00:00Z"),
        ("globex", "entity", "2024-03-01T00:00:00Z"),
    ]


def test_resolving_keeps_one_fact_supersedes_the_disagreeing_ones_and_keeps_history(
    ontologist,
):
    *_, results = ontologist(
        [
            *SEED,
            tool_call(
                "ontology_resolve",
                {
                    "subject": "ada",
                    "predicate": "age",
                    "strategy": "most_confident",
                    "reason": "hr is authoritative",
                },
            ),
            tool_call(
                "ontology_resolve",
                {"subject": "bob", "predicate": "works_for", "strategy": "newest"},
            ),
            tool_call("ontology_conflicts", {}),
            tool_call("ontology_query", {"subject": "bob", "predicate": "name"}),
            tool_call(
                "ontology_query", {"subject": "ada", "predicate": "age", "include_superseded": True}
            ),
            tool_call("ontology_query", {"subject": "bob", "predicate": "works_for"}),
        ]
    )
    out = outputs(results)
    age, works, left, name, history, employer = out[-6:]
    assert (age["kept"]["object"], age["kept"]["source"], age["strategy"]) == (
        36,
        "hr",
        "most_confident",
    )
    assert len(age["superseded"]) == 1  # crm's 37; badge agrees with hr and stays
    assert works["kept"]["object"] == "globex" and len(works["superseded"]) == 1
    assert [(c["subject"], c["predicate"]) for c in left["conflicts"]] == [("bob", "name")]
    assert {f["object"] for f in name["facts"]} == {"Bob", "Robert", "Bobby"}
    assert sorted((f["object"], f["source"], f["status"]) for f in history["facts"]) == [
        (36, "badge", "active"),
        (36, "hr", "active"),
        (37, "crm", "superseded"),
    ]
    assert [f["object"] for f in employer["facts"]] == ["globex"]
    # a later turn on the same home: what the first one left
    _, _, results = ontologist(
        [tool_call("ontology_conflicts", {"subject": "bob", "predicate": "name"})]
    )
    name_conflict = outputs(results)[-1]["conflicts"][0]["facts"]
    robert = next(f for f in name_conflict if f["object"] == "Robert")
    _, _, results = ontologist(
        [
            tool_call(
                "ontology_resolve", {"subject": "bob", "predicate": "name", "keep": robert["id"]}
            ),
            tool_call("ontology_conflicts", {}),
            tool_call(
                "ontology_resolve", {"subject": "bob", "predicate": "name", "strategy": "newest"}
            ),
        ]
    )
    kept, none_left, again = results
    assert kept["output"]["kept"]["object"] == "Robert" and len(kept["output"]["superseded"]) == 2
    assert none_left["output"]["conflicts"] == []
    assert again["ok"] is False and "no conflict to resolve" in again["error"]
