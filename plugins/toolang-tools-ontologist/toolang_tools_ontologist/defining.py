"""``ontology_define_type``: a new type, the same definition again (a no-op), or a new
definition of an existing type (``replace``) that every entity of it still meets."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolang_tools_ontologist.common import OntologyError
from toolang_tools_ontologist.facts import entity_type
from toolang_tools_ontologist.typedefs import (
    TypeDef,
    check_attributes_schema,
    check_relations,
    load_type,
    stored_form,
    type_names,
)

if TYPE_CHECKING:
    from sqlite_utils import Database


def define(
    db: Database,
    owner: str,
    *,
    name: str,
    attributes: Mapping[str, Any],
    relations: Mapping[str, Any],
    description: str,
    replace: bool,
    now: float,
) -> dict[str, Any]:
    """Store the type; run inside a transaction.

    :raises OntologyError: a bad schema or relation, an existing type defined otherwise
        without ``replace``, or — with it — an entity or fact the new definition refuses.
    """
    schema = check_attributes_schema(name, attributes)
    known = set(type_names(db, owner))
    typedef = TypeDef(
        name, description.strip(), schema, check_relations(name, relations, schema, known)
    )
    stored_attributes, stored_relations = stored_form(typedef)
    if name in known:
        old = load_type(db, owner, name)
        if stored_form(old) == (stored_attributes, stored_relations):
            return {"type": name, "defined": False, "reason": "already defined so"}
        if not replace:
            raise OntologyError(
                f"type {name!r} is already defined otherwise (predicates {old.predicates()}); "
                "pass replace=true to redefine it — every entity of it must still fit"
            )
        _check_existing(db, owner, typedef)
    db.execute(
        "INSERT OR REPLACE INTO types (owner, name, description, attributes, relations, "
        "defined_at) VALUES (?, ?, ?, ?, ?, ?)",
        [owner, name, typedef.description, stored_attributes, stored_relations, now],
    )
    if name in known:
        for predicate in typedef.predicates():
            db.execute(
                "UPDATE facts SET single = ? WHERE owner = ? AND predicate = ? AND subject IN "
                "(SELECT key FROM entities WHERE owner = ? AND type = ?)",
                [int(typedef.is_single(predicate)), owner, predicate, owner, name],
            )
    return {
        "type": name,
        "defined": True,
        "replaced": name in known,
        "attributes": sorted(typedef.properties),
        "relations": {
            k: {"target": v.target, "many": v.many} for k, v in typedef.relations.items()
        },
        "single_valued": [p for p in typedef.predicates() if typedef.is_single(p)],
    }


def _check_existing(db: Database, owner: str, typedef: TypeDef) -> None:
    """Every entity of the type, as its active facts describe it, fits ``typedef``."""
    values: dict[str, dict[str, Any]] = defaultdict(dict)
    found = db.execute(
        "SELECT e.key, f.predicate, f.object, f.object_kind FROM entities e "
        "LEFT JOIN facts f ON f.owner = e.owner AND f.subject = e.key AND f.status = 'active' "
        "WHERE e.owner = ? AND e.type = ? ORDER BY f.id",
        [owner, typedef.name],
    )
    for key, predicate, obj, kind in found.fetchall():
        values.setdefault(key, {})
        if predicate is None:
            continue
        if predicate not in typedef.properties and predicate not in typedef.relations:
            raise OntologyError(
                f"type {typedef.name!r} cannot drop {predicate!r}: entity {key!r} has active "
                "facts for it; resolve or keep the predicate"
            )
        if kind == "entity":
            target = typedef.relations.get(predicate)
            linked = entity_type(db, owner, obj)
            if target is None or linked != target.target:
                raise OntologyError(
                    f"type {typedef.name!r} cannot be redefined so: entity {key!r} links "
                    f"{predicate!r} to {obj!r}, a {linked!r}; expected a relation to that type"
                )
            continue
        value = json.loads(obj)
        if not typedef.is_single(predicate):
            values[key].setdefault(predicate, []).append(value)
        else:
            values[key][predicate] = value
    for key, current in values.items():
        problem = typedef.attributes_problem(current, new=True)
        if problem is not None:
            raise OntologyError(
                f"type {typedef.name!r} cannot be redefined so: entity {key!r} would not fit "
                f"({problem})"
            )
