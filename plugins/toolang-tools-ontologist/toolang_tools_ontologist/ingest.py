"""``ontology_ingest``: rows of a CSV or JSON file mapped to entities of one type.

The mapping spec names the type, the column holding each row's entity key, and which
column fills each attribute and relation::

    {"type": "Person", "key": "id", "label": "name",
     "attributes": {"name": "name", "age": "age"}, "relations": {"works_for": "company"},
     "source": "hr.csv", "confidence": 0.9, "at": "updated", "separator": ";"}

A mapping that cannot work — an unknown type, a predicate the type lacks, a column the
file does not have — refuses the whole ingest, naming what was expected. A row that
does not fit — no key, a key twice, a value its attribute's schema refuses, a relation
to no entity of the target type — is rejected and reported with its line; the other
rows are written in one transaction. CSV text is converted by each attribute's schema
(integer, number, boolean; an array attribute's items split on ``separator``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from toolang_tools_ontologist.common import OntologyError
from toolang_tools_ontologist.facts import (
    NewFact,
    check_key,
    entity_type,
    parse_time,
    write_fact,
)
from toolang_tools_ontologist.reading import Row, Table
from toolang_tools_ontologist.typedefs import TypeDef, canonical

if TYPE_CHECKING:
    from sqlite_utils import Database

MAPPING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "minLength": 1, "maxLength": 64},
        "key": {"type": "string", "minLength": 1, "maxLength": 200},
        "label": {"type": "string", "minLength": 1, "maxLength": 200},
        "attributes": {
            "type": "object",
            "additionalProperties": {"type": "string", "minLength": 1, "maxLength": 200},
        },
        "relations": {
            "type": "object",
            "additionalProperties": {"type": "string", "minLength": 1, "maxLength": 200},
        },
        "source": {"type": "string", "maxLength": 200},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "at": {"type": "string", "minLength": 1, "maxLength": 200},
        "separator": {"type": "string", "minLength": 1, "maxLength": 5},
    },
    "required": ["type", "key"],
    "additionalProperties": False,
}
"""The shape of a mapping spec (checked before any hook runs)."""


class RowProblem(ValueError):
    """One row does not fit; the message is reported with its line."""


@attrs.define
class Accepted:
    line: int
    key: str
    label: str
    new: bool
    facts: list[NewFact]
    links: list[tuple[str, str]]  # (relation, target key)


def check_mapping(typedef: TypeDef, mapping: Mapping[str, Any], table: Table) -> None:
    """:raises OntologyError: a predicate the type lacks, or a column the file lacks."""
    for name in mapping.get("attributes", {}):
        if name not in typedef.properties:
            raise OntologyError(
                f"mapping.attributes: {name!r} is not an attribute of type {typedef.name!r}; "
                f"expected some of {sorted(typedef.properties)}"
            )
    for name in mapping.get("relations", {}):
        if name not in typedef.relations:
            raise OntologyError(
                f"mapping.relations: {name!r} is not a relation of type {typedef.name!r}; "
                f"expected some of {sorted(typedef.relations)}"
            )
    named = [("key", mapping["key"])] + [
        (f"{part}.{name}", column)
        for part in ("attributes", "relations")
        for name, column in mapping.get(part, {}).items()
    ]
    named += [(part, mapping[part]) for part in ("label", "at") if part in mapping]
    for where, column in named:
        if column not in table.columns:
            raise OntologyError(
                f"mapping.{where} names the column {column!r}, which the data does not have; "
                f"expected one of {list(table.columns)}"
            )


def ingest(
    db: Database,
    owner: str,
    typedef: TypeDef,
    mapping: Mapping[str, Any],
    table: Table,
    *,
    source: str,
    now: float,
    dry_run: bool,
    shown: int,
) -> dict[str, Any]:
    """Check every row, write the accepted ones (unless ``dry_run``); run it inside a
    transaction. The answer counts the rows and lists the rejected ones by line."""
    check_mapping(typedef, mapping, table)
    rejected: list[tuple[int, str]] = []
    accepted: dict[str, Accepted] = {}
    for row in table.rows:
        try:
            taken = _row(
                db,
                owner,
                typedef,
                mapping=mapping,
                typed=table.typed,
                row=row,
                source=source,
                now=now,
            )
            if taken.key in accepted:
                raise RowProblem(f"key {taken.key!r} is already on line {accepted[taken.key].line}")
            accepted[taken.key] = taken
        except (RowProblem, OntologyError) as exc:
            rejected.append((row.line, str(exc)))
    _check_links(db, owner, typedef, accepted, rejected)
    facts = created = 0
    if not dry_run:
        for taken in accepted.values():
            if taken.new:
                db.execute(
                    "INSERT INTO entities (owner, key, type, label, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [owner, taken.key, typedef.name, taken.label, now],
                )
                created += 1
                facts += _insert_new(db, owner, taken.facts, now)
                continue
            for fact in taken.facts:
                facts += write_fact(db, owner, fact, now)[1]
    rejected.sort()
    return {
        "type": typedef.name,
        "source": source,
        "rows": len(table.rows),
        "accepted": len(accepted),
        "created": created,
        "facts_added": facts,
        "rejected_count": len(rejected),
        "rejected": [{"line": line, "error": error} for line, error in rejected[:shown]],
        "dry_run": dry_run,
    }


def _row(
    db: Database,
    owner: str,
    typedef: TypeDef,
    *,
    mapping: Mapping[str, Any],
    typed: bool,
    row: Row,
    source: str,
    now: float,
) -> Accepted:
    if row.problem is not None:
        raise RowProblem(row.problem)
    values = row.values
    raw_key = values.get(mapping["key"])
    if raw_key is None or (isinstance(raw_key, str) and not raw_key.strip()):
        raise RowProblem(f"column {mapping['key']!r} is empty: expected the entity's key")
    key = check_key(str(raw_key).strip(), f"column {mapping['key']!r}")
    existing = entity_type(db, owner, key)
    if existing is not None and existing != typedef.name:
        raise RowProblem(f"entity {key!r} exists as a {existing!r}, not a {typedef.name!r}")
    separator = mapping.get("separator", ";")
    attributes: dict[str, Any] = {}
    for name, column in mapping.get("attributes", {}).items():
        value = values.get(column)
        if value is None or (not typed and value == ""):
            continue
        if not typed:
            value = _converted(value, typedef.properties[name], separator, column)
        attributes[name] = value
    problem = typedef.attributes_problem(attributes, new=existing is None)
    if problem is not None:
        raise RowProblem(problem)
    at = parse_time(_text(values.get(mapping["at"])) if "at" in mapping else None, now,
                    f"column {mapping.get('at')!r}")  # fmt: skip
    confidence = float(mapping.get("confidence", 1.0))
    facts = [
        NewFact(key, p, canonical(v), "value", typedef.is_single(p), source, confidence, at)
        for p, v in typedef.facts_of(attributes)
    ]
    links: list[tuple[str, str]] = []
    for name, column in mapping.get("relations", {}).items():
        target = _text(values.get(column))
        if target is None or not target.strip():
            continue
        targets = (
            [t.strip() for t in target.split(separator)]
            if typedef.relations[name].many
            else [target.strip()]
        )
        for one in filter(None, targets):
            links.append((name, check_key(one, f"column {column!r}")))
            facts.append(
                NewFact(key, name, one, "entity", typedef.is_single(name), source, confidence, at)
            )
    label = _text(values.get(mapping["label"])) if "label" in mapping else None
    return Accepted(row.line, key, (label or key).strip(), existing is None, facts, links)


def _insert_new(db: Database, owner: str, facts: list[NewFact], now: float) -> int:
    """The facts of an entity created in this transaction: none is kept yet, so only
    the row's own repeats are dropped."""
    unique = {(f.predicate, f.object, f.object_kind): f for f in facts}
    db.conn.executemany(
        "INSERT INTO facts (owner, subject, predicate, object, object_kind, single, source, "
        "confidence, observed_at, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (owner, f.subject, f.predicate, f.object, f.object_kind, int(f.single), f.source,
             f.confidence, f.observed_at, now)
            for f in unique.values()
        ],
    )  # fmt: skip
    return len(unique)


def _check_links(
    db: Database,
    owner: str,
    typedef: TypeDef,
    accepted: dict[str, Accepted],
    rejected: list[tuple[int, str]],
) -> None:
    """Reject rows whose relations lead to no entity of the target type — kept ones or
    rows of this ingest — until no rejection takes away another row's target."""
    known: dict[str, str | None] = {}
    changed = True
    while changed:
        changed = False
        for key, taken in list(accepted.items()):
            for relation, target in taken.links:
                wanted = typedef.relations[relation].target
                if target in accepted and wanted == typedef.name:
                    continue
                if target not in known:
                    known[target] = entity_type(db, owner, target)
                if known[target] != wanted:
                    what = "no entity" if known[target] is None else f"a {known[target]!r}"
                    rejected.append(
                        (taken.line, f"relation {relation!r}: {target!r} is {what}; expected "
                         f"the key of a {wanted!r} entity")
                    )  # fmt: skip
                    del accepted[key]
                    changed = True
                    break


def _text(value: Any) -> str | None:
    return None if value is None else value if isinstance(value, str) else str(value)


def _converted(text: str, schema: Mapping[str, Any], separator: str, column: str) -> Any:
    kind = schema.get("type")
    if kind == "array" or (isinstance(kind, list) and "array" in kind):
        items = schema.get("items", {})
        return [
            _scalar(part.strip(), items if isinstance(items, Mapping) else {}, column)
            for part in text.split(separator)
            if part.strip()
        ]
    return _scalar(text, schema, column)


def _scalar(text: str, schema: Mapping[str, Any], column: str) -> Any:
    """CSV text as the value the schema's ``type`` asks for."""
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else list(kind or [])
    stripped = text.strip()
    if "integer" in kinds:
        try:
            return int(stripped)
        except ValueError:
            pass
    if "number" in kinds:
        try:
            return float(stripped)
        except ValueError:
            pass
    if "boolean" in kinds and stripped.lower() in BOOLEANS:
        return BOOLEANS[stripped.lower()]
    if any(k in kinds for k in ("object", "array")):
        try:
            return json.loads(stripped)
        except ValueError:
            pass
    if not kinds or "string" in kinds:
        return text
    raise RowProblem(f"column {column!r}: expected {' or '.join(kinds)}, found {text!r}")


BOOLEANS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def source_of(mapping: Mapping[str, Any], path: str | None) -> str:
    """The facts' source: the mapping's, else the file's name, else ``ingest``."""
    given = str(mapping.get("source", "")).strip()
    return given or (Path(path).name if path else "ingest")
