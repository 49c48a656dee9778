"""Types: their attribute schemas (JSON Schema objects) and relations, how a value is
checked against them, and which predicates hold one object per subject.

A type's ``attributes`` is a JSON Schema object whose ``properties`` name its
attributes; an attribute whose schema is an array (``"type": "array"``) holds many
values (one fact per item), any other holds one. ``relations`` name the entities an
entity of the type links to: ``{"works_for": {"target": "Company", "many": false}}``.
A predicate holding one object per subject is *single-valued*: two active facts with
different objects for it are a conflict.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core import SchemaError, check_schema
from toolang_tools_ontologist.common import OntologyError

if TYPE_CHECKING:
    from sqlite_utils import Database

TYPE_NAME: Final = r"^[A-Za-z][A-Za-z0-9_]{0,63}$"
PREDICATE: Final = r"^[a-z][a-z0-9_]{0,63}$"
ENTITY_KEY: Final = r"^[A-Za-z0-9][A-Za-z0-9_.:@/+-]{0,199}$"
MAX_SCHEMA_CHARS: Final = 20_000


def canonical(value: Any) -> str:
    """The JSON text a value is stored and compared as (keys sorted, no spaces)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@attrs.frozen
class Relation:
    target: str
    many: bool = False


@attrs.frozen
class TypeDef:
    """One owner's type, as ``ontology_define_type`` stored it."""

    name: str
    description: str
    attributes: Mapping[str, Any]
    relations: Mapping[str, Relation]
    whole: str = attrs.field(
        init=False, eq=False, default=attrs.Factory(lambda t: canonical(t.attributes), True)
    )
    """The attribute schema as canonical JSON: the key of its compiled validator."""
    single: Mapping[str, bool] = attrs.field(
        init=False, eq=False, default=attrs.Factory(lambda t: t.single_valued(), True)
    )

    def single_valued(self) -> dict[str, bool]:
        out = {p: not _is_array(s) for p, s in self.attributes.get("properties", {}).items()}
        out.update({p: not r.many for p, r in self.relations.items()})
        return out

    @property
    def properties(self) -> Mapping[str, Any]:
        props: Mapping[str, Any] = self.attributes.get("properties", {})
        return props

    def predicates(self) -> list[str]:
        return sorted([*self.properties, *self.relations])

    def is_single(self, predicate: str) -> bool:
        return self.single[predicate]

    def expect(self, predicate: str) -> None:
        """:raises OntologyError: naming the type's predicates when ``predicate`` is none."""
        if predicate not in self.properties and predicate not in self.relations:
            raise OntologyError(
                f"predicate {predicate!r}: type {self.name!r} has no such attribute or "
                f"relation; expected one of {self.predicates()}"
            )

    def value_problem(self, predicate: str, value: Any) -> str | None:
        """What is wrong with ``value`` as one fact's object for the attribute
        ``predicate`` (one item of an array attribute), or ``None``."""
        schema = self.properties[predicate]
        wrapped = [value] if _is_array(schema) else value
        return _problem(_partial(self.attributes, predicate), {predicate: wrapped})

    def attributes_problem(self, values: Mapping[str, Any], *, new: bool) -> str | None:
        """What is wrong with an entity's ``values``: against the whole schema for a
        ``new`` entity (required attributes included), attribute by attribute for one
        that exists."""
        unknown = sorted(set(values) - set(self.properties))
        if unknown:
            return (
                f"{unknown[0]!r} is not an attribute of type {self.name!r}; expected "
                f"some of {sorted(self.properties)}"
            )
        if new:
            return _problem(self.whole, dict(values))
        partial = copy.deepcopy(dict(self.attributes))
        partial.pop("required", None)
        partial.pop("minProperties", None)
        return _problem(canonical(partial), dict(values))

    def facts_of(self, values: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
        """``(predicate, object)`` of each fact an entity's attribute ``values`` hold."""
        for predicate, value in values.items():
            if not self.single[predicate] and isinstance(value, list):
                for item in value:
                    yield predicate, item
            else:
                yield predicate, value


def _is_array(schema: Any) -> bool:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    return kind == "array" or (isinstance(kind, list) and "array" in kind)


def _partial(attributes: Mapping[str, Any], predicate: str) -> str:
    """The schema one fact's object is checked with: the type's whole schema (so local
    ``$ref``s resolve) without what only a whole entity must meet."""
    partial = copy.deepcopy(dict(attributes))
    for keyword in ("required", "minProperties", "dependentRequired", "dependencies"):
        partial.pop(keyword, None)
    prop = partial["properties"][predicate]
    if _is_array(prop) and isinstance(prop, dict):
        prop.pop("minItems", None)
        prop.pop("uniqueItems", None)
    return canonical(partial)


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Callable[[Any], Any]:
    import fastjsonschema

    return fastjsonschema.compile(json.loads(schema_json), use_default=False)


def _problem(schema_json: str, value: Any) -> str | None:
    import fastjsonschema

    try:
        _validator(schema_json)(value)
    except fastjsonschema.JsonSchemaValueException as exc:
        message: str = exc.message
        return message.replace("data.", "", 1).replace("data", "the attributes", 1)
    return None


def check_attributes_schema(type_name: str, schema: Any) -> dict[str, Any]:
    """``schema`` if it can be a type's attributes.

    :raises OntologyError: naming what is wrong — not an object schema, no
        ``properties``, an attribute name that is not a predicate, a ``$ref`` that leaves
        the schema (never fetched), or not a valid JSON Schema.
    """
    where = f"attributes of type {type_name!r}"
    if not isinstance(schema, Mapping):
        raise OntologyError(f"{where}: expected a JSON Schema object, got {type(schema).__name__}")
    if len(canonical(schema)) > MAX_SCHEMA_CHARS:
        raise OntologyError(f"{where}: expected at most {MAX_SCHEMA_CHARS} characters of JSON")
    if schema.get("type", "object") != "object":
        raise OntologyError(f'{where}: expected "type": "object", got {schema.get("type")!r}')
    props = schema.get("properties", {})
    if not isinstance(props, Mapping):
        raise OntologyError(f"{where}: expected properties to map attribute names to schemas")
    for name, prop in props.items():
        if not re.fullmatch(PREDICATE, name):
            raise OntologyError(
                f"{where}: attribute name {name!r} is not a predicate; expected lowercase "
                f"letters, digits and _ ({PREDICATE})"
            )
        if not isinstance(prop, Mapping):
            raise OntologyError(f"{where}: attribute {name!r}: expected a JSON Schema object")
    _refuse_outside_refs(schema, where)
    try:
        checked = dict(check_schema(schema, where=where))
    except SchemaError as exc:
        raise OntologyError(str(exc)) from None
    return {"type": "object", **checked, "properties": dict(props)}


def _refuse_outside_refs(node: Any, where: str) -> None:
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if ref is not None and not (isinstance(ref, str) and ref.startswith("#")):
            raise OntologyError(
                f"{where}: $ref {ref!r} leaves the schema; expected a local reference "
                "starting with '#' (nothing is fetched)"
            )
        for value in node.values():
            _refuse_outside_refs(value, where)
    elif isinstance(node, list):
        for value in node:
            _refuse_outside_refs(value, where)


def check_relations(
    type_name: str, relations: Mapping[str, Any], attributes: Mapping[str, Any], known: set[str]
) -> dict[str, Relation]:
    """The relations as stored. ``known``: the owner's defined type names.

    :raises OntologyError: a relation name that is not a predicate or is also an
        attribute, or a target type that is not defined (the type itself may be).
    """
    out: dict[str, Relation] = {}
    for name, spec in relations.items():
        where = f"relation {name!r} of type {type_name!r}"
        if not re.fullmatch(PREDICATE, name):
            raise OntologyError(f"{where}: expected a predicate name ({PREDICATE})")
        if name in attributes.get("properties", {}):
            raise OntologyError(f"{where}: {name!r} is already an attribute of the type")
        target = spec.get("target") if isinstance(spec, Mapping) else None
        if not isinstance(target, str) or (target not in known and target != type_name):
            raise OntologyError(
                f"{where}: target {target!r} is not a defined type; expected one of "
                f"{sorted(known | {type_name})}"
            )
        many = spec.get("many", False)
        if not isinstance(many, bool):
            raise OntologyError(f"{where}: many: expected true or false, got {many!r}")
        out[name] = Relation(target, many)
    return out


def load_type(db: Database, owner: str, name: str) -> TypeDef:
    """The owner's type ``name``.

    :raises OntologyError: an unknown type, naming the types the owner has defined.
    """
    row = db.execute(
        "SELECT name, description, attributes, relations FROM types WHERE owner = ? AND name = ?",
        [owner, name],
    ).fetchone()
    if row is None:
        raise OntologyError(
            f"type {name!r} is not defined; expected one of {type_names(db, owner)}"
        )
    return type_from_row(row)


def type_from_row(row: Any) -> TypeDef:
    name, description, attributes, relations = row
    return TypeDef(
        name,
        description,
        json.loads(attributes),
        {k: Relation(**v) for k, v in json.loads(relations).items()},
    )


def type_names(db: Database, owner: str) -> list[str]:
    found = db.execute("SELECT name FROM types WHERE owner = ? ORDER BY name", [owner])
    return [name for (name,) in found.fetchall()]


def stored_form(typedef: TypeDef) -> tuple[str, str]:
    """``(attributes, relations)`` as stored (canonical JSON: equal definitions compare
    equal)."""
    relations = {k: attrs.asdict(v) for k, v in typedef.relations.items()}
    return canonical(typedef.attributes), canonical(relations)
