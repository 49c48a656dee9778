"""``ontology_ingest``: CSV and JSON rows mapped to entities, bad rows reported by line."""

from __future__ import annotations

import json
import random

from ontology_helpers import COMPANY, PERSON, outputs

from toolang_core.testing.models import tool_call

TYPES = [
    tool_call("ontology_define_type", {"name": "Company", "attributes": COMPANY}),
    tool_call(
        "ontology_define_type",
        {"name": "Person", "attributes": PERSON, "relations": {"works_for": {"target": "Company"}}},
    ),
    tool_call(
        "ontology_add_entity", {"type": "Company", "key": "acme", "attributes": {"name": "Acme"}}
    ),
    tool_call(
        "ontology_add_entity",
        {"type": "Company", "key": "globex", "attributes": {"name": "Globex"}},
    ),
]
MAPPING = {
    "type": "Person",
    "key": "id",
    "label": "name",
    "attributes": {"name": "name", "age": "age", "email": "email", "tags": "tags"},
    "relations": {"works_for": "company"},
}
HEADER = ["id", "name", "age", "email", "tags", "company"]
BAD_ROWS = [
    ("", "No Key", "30", "nk@x.org", "", "acme"),  # empty key
    ("{k}", "Name", "abc", "a@x.org", "", "acme"),  # age not an integer
    ("{k}", "Name", "200", "a@x.org", "", "acme"),  # age over the maximum
    ("{k}", "Name", "30", "not-an-email", "", "acme"),  # email pattern
    ("{k}", "Name", "30", "a@x.org", "", "acme", "extra"),  # a field too many
    ("p1", "Again", "30", "a@x.org", "", "acme"),  # p1 is on an earlier line
    ("{k}", "Name", "30", "a@x.org", "", "initech"),  # no such company
    ("{k}", "", "30", "a@x.org", "", "acme"),  # required name missing
    ("bad key!", "Name", "30", "a@x.org", "", "acme"),  # not an entity key
    ("{k}", "Name", "30", "a@x.org", "", "p2"),  # works_for a Person, not a Company
]


def quoted(field: str) -> str:
    return '"' + field.replace('"', '""') + '"' if any(c in field for c in ',"\n') else field


def build_csv(rows: int, bad: int, seed: int = 37) -> tuple[str, list[int]]:
    """A CSV of ``rows`` data rows, ``bad`` of them bad (at random places, past the
    first ten); some good rows have a quoted field spanning two lines. Returns the text
    and the lines the bad rows start on."""
    places = set(random.Random(seed).sample(range(10, rows), bad))
    lines = [",".join(HEADER)]
    line = 2
    bad_lines: list[int] = []
    kinds = iter(BAD_ROWS * (bad // len(BAD_ROWS) + 1))
    for n in range(1, rows + 1):
        if n in places:
            record = tuple(f.format(k=f"x{n}") for f in next(kinds))
            bad_lines.append(line)
        else:
            tags = "math;\nlogic" if n % 1000 == 0 else "math;logic"
            company = "acme" if n % 2 else "globex"
            record = (f"p{n}", f"Person {n}", str(20 + n % 50), f"p{n}@x.org", tags, company)
        text = ",".join(quoted(f) for f in record)
        lines.append(text)
        line += text.count("\n") + 1
    return "\n".join(lines) + "\n", bad_lines


def test_a_10000_row_csv_with_20_bad_rows_reports_exactly_those_rows_by_line(ontologist):
    text, bad_lines = build_csv(10_000, 20)
    (ontologist.root / "people.csv").write_text(text)
    *_, results = ontologist(
        [
            *TYPES,
            tool_call("ontology_ingest", {"path": "people.csv", "mapping": MAPPING}),
            tool_call("ontology_query", {"subject": "p1000", "depth": 1}),
            tool_call(
                "ontology_query", {"predicate": "works_for", "object": "acme", "limit": 1000}
            ),
        ]
    )
    report, p1000, at_acme = outputs(results)[-3:]
    assert report["rejected_count"] == 20
    assert [r["line"] for r in report["rejected"]] == bad_lines
    assert (report["rows"], report["accepted"], report["created"]) == (10_000, 9_980, 9_980)
    assert report["source"] == "people.csv"
    errors = [r["error"] for r in report["rejected"][:10]]
    by_kind = dict(zip(BAD_ROWS, errors, strict=False))
    assert all(errors), errors
    assert "'id' is empty" in by_kind[BAD_ROWS[0]]
    assert "column 'age': expected integer, found 'abc'" in by_kind[BAD_ROWS[1]]
    assert "expected 6 fields" in by_kind[BAD_ROWS[4]]
    assert "already on line" in by_kind[BAD_ROWS[5]]
    assert "'initech' is no entity" in by_kind[BAD_ROWS[6]]
    mine = {(f["predicate"], json.dumps(f["object"])) for f in p1000["facts"] if f["depth"] == 0}
    assert {
        ("tags", '"math"'),
        ("tags", '"logic"'),
        ("age", "20"),
        ("works_for", '"globex"'),
    } <= mine
    assert p1000["entities"]["p1000"] == {"type": "Person", "label": "Person 1000"}
    assert {f["subject"] for f in p1000["facts"] if f["depth"] == 1} == {"globex"}
    assert at_acme["truncated"] is True and len(at_acme["facts"]) == 1000


def test_json_and_json_lines_rows_are_reported_by_the_line_they_start_on(ontologist):
    array = (
        "[\n"
        '  {"id": "c1", "name": "One"},\n'
        '  {"id": "c2",\n'
        '   "name": 2},\n'
        '  "not a row",\n'
        '  {"id": "c3", "name": "Three", "city": "Oslo"}\n'
        "]\n"
    )
    lines = '{"id": "c4", "name": "Four"}\n\n{"id": "c5"\n{"id": "c6", "name": "Six"}\n'
    mapping = {"type": "Company", "key": "id", "attributes": {"name": "name", "city": "city"}}
    *_, results = ontologist(
        [
            TYPES[0],
            tool_call("ontology_ingest", {"content": array, "format": "json", "mapping": mapping}),
            tool_call(
                "ontology_ingest",
                {
                    "content": lines,
                    "format": "jsonl",
                    "mapping": {**mapping, "attributes": {"name": "name"}},
                },
            ),
        ]
    )
    from_array, from_lines = outputs(results)[-2:]
    assert [r["line"] for r in from_array["rejected"]] == [3, 5]
    assert "name must be string" in from_array["rejected"][0]["error"]
    assert (from_array["accepted"], from_array["source"]) == (2, "ingest")
    assert [r["line"] for r in from_lines["rejected"]] == [3]
    assert from_lines["accepted"] == 2


def test_ingesting_again_adds_nothing_and_new_values_show_as_conflicts(ontologist):
    first = "id,name,city\nc1,One,Oslo\nc2,Two,Rome\n"
    second = "id,name,city\nc1,One,Bergen\nc2,Two,Rome\n"
    mapping = {"type": "Company", "key": "id", "attributes": {"name": "name", "city": "city"}}
    *_, results = ontologist(
        [
            TYPES[0],
            tool_call("ontology_ingest", {"content": first, "mapping": mapping}),
            tool_call("ontology_ingest", {"content": first, "mapping": mapping}),
            tool_call(
                "ontology_ingest", {"content": second, "mapping": {**mapping, "source": "registry"}}
            ),
            tool_call("ontology_conflicts", {}),
        ]
    )
    once, again, other, found = outputs(results)[-4:]
    assert (once["created"], once["facts_added"]) == (2, 4)
    assert (again["created"], again["facts_added"], again["accepted"]) == (0, 0, 2)
    assert (other["created"], other["facts_added"]) == (0, 4)
    assert [(c["subject"], c["predicate"]) for c in found["conflicts"]] == [("c1", "city")]
