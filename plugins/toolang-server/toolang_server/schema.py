"""Typed API models: one attrs class per request body, query and response, read two
ways — by the handlers, which validate what a caller sent with :func:`parse_body` and
:func:`parse_query`, and by :mod:`toolang_server.openapi`, which writes the same
classes as JSON Schema. A field's rules (length, range, choices, pattern, description,
example) live in its metadata (:func:`field`), so the document cannot say one thing and
the handler check another.

The supported field types are the plain JSON ones: ``str``, ``int``, ``float``,
``bool``, ``X | None``, ``list[X]``, ``dict[str, X]``, ``Any``, ``Literal[...]`` and
nested models. Bodies and queries use the scalar ones; a field that needs a check of
its own (attachments, limits, a JSON Schema) is typed ``Any`` and checked by its
handler, its schema given with ``schema=``.
"""

from __future__ import annotations

import enum
import re
import types
import typing
from collections.abc import Mapping
from typing import Any, Final, TypeVar, get_args, get_origin

import attrs

from toolang_server.http import ApiError, Body

T = TypeVar("T")
_META: Final = "toolang_api"


@attrs.frozen
class Rules:
    """What one field takes, for the handler's check and the document's schema."""

    doc: str = ""
    max_len: int | None = None
    choices: tuple[str, ...] | None = None
    low: float | None = None
    high: float | None = None
    pattern: str | None = None
    required: bool = False
    schema: Mapping[str, Any] | None = None
    example: Any = None
    name: str | None = None
    """The wire name, when it is not the attribute's (``"in"``, a header)."""


def field(
    doc: str = "",
    *,
    default: Any = None,
    max_len: int | None = None,
    choices: tuple[str, ...] | None = None,
    low: float | None = None,
    high: float | None = None,
    pattern: str | None = None,
    required: bool = False,
    schema: Mapping[str, Any] | None = None,
    example: Any = None,
    name: str | None = None,
) -> Any:
    """An attrs field with its API rules (a required field has no default)."""
    rules = Rules(doc, max_len, choices, low, high, pattern, required, schema, example, name)
    if required:
        return attrs.field(metadata={_META: rules})
    return attrs.field(default=default, metadata={_META: rules})


def required(
    doc: str = "",
    *,
    max_len: int | None = None,
    choices: tuple[str, ...] | None = None,
    schema: Mapping[str, Any] | None = None,
    example: Any = None,
) -> dict[str, Rules]:
    """The metadata of a required field (``attrs.field(metadata=required(...))``: typed
    checkers see it has no default)."""
    return {_META: Rules(doc, max_len, choices, required=True, schema=schema, example=example)}


def rules_of(attribute: attrs.Attribute[Any]) -> Rules:
    found = attribute.metadata.get(_META)
    return found if isinstance(found, Rules) else Rules()


def wire_name(attribute: attrs.Attribute[Any]) -> str:
    return rules_of(attribute).name or attribute.name


def fields_of(model: type[Any]) -> tuple[attrs.Attribute[Any], ...]:
    """``model``'s fields with their types resolved (the modules use postponed
    annotations)."""
    return tuple(attrs.fields(attrs.resolve_types(model)))


def _nullable(tp: Any) -> tuple[Any, bool]:
    """``(X, True)`` for ``X | None``; ``(tp, False)`` otherwise."""
    if get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(get_args(tp)) == 2:
            return args[0], True
    return tp, False


# ---------------------------------------------------------------- validation


def parse_body(model: type[T], data: Mapping[str, Any]) -> T:
    """``data`` (a decoded JSON object) as ``model``: unknown fields refused, every
    scalar field checked against its rules.

    :raises ApiError: 400 naming the field and what was expected.
    """
    fields = fields_of(model)
    body = Body(data, {wire_name(f) for f in fields})
    values: dict[str, Any] = {}
    for attribute in fields:
        name = wire_name(attribute)
        if name in data:
            values[attribute.name] = _checked(body, attribute, name)
        elif rules_of(attribute).required:
            what = "a string" if _nullable(attribute.type)[0] is str else "a JSON value"
            raise ApiError(400, f"{name} is required", field=name, expected=what)
    return model(**values)


def _checked(body: Body, attribute: attrs.Attribute[Any], name: str) -> Any:
    rules = rules_of(attribute)
    tp, _ = _nullable(attribute.type)
    if tp is str:
        value = body.text(
            name, required=rules.required, max_len=rules.max_len or 100_000, choices=rules.choices
        )
        if value is not None and rules.pattern and not re.match(rules.pattern, value):
            raise ApiError(
                400,
                f"{name} {value!r:.80} is not allowed",
                field=name,
                expected=f"a string matching {rules.pattern}",
            )
        return value
    if tp is bool:
        return body.flag(name)
    if tp in (int, float):
        low = rules.low if rules.low is not None else 0
        high = rules.high if rules.high is not None else 86400
        number = body.number(name, low=low, high=high)
        return int(number) if tp is int and number is not None else number
    return body.data[name]  # Any: the handler checks it (see the field's docs)


def parse_query(model: type[T], params: Mapping[str, str]) -> T:
    """The query parameters ``model`` names, checked against their rules (others are
    ignored, as browsers and proxies add their own).

    :raises ApiError: 400 naming the parameter and what was expected.
    """
    values: dict[str, Any] = {}
    for attribute in fields_of(model):
        name = wire_name(attribute)
        raw = params.get(name)
        rules = rules_of(attribute)
        if raw is None:
            if rules.required:
                raise ApiError(
                    400,
                    f"query parameter {name} is required",
                    field=name,
                    expected=rules.doc or "a value",
                )
            continue
        values[attribute.name] = _query_value(attribute, rules, name, raw)
    return model(**values)


def _query_value(attribute: attrs.Attribute[Any], rules: Rules, name: str, raw: str) -> Any:
    tp, _ = _nullable(attribute.type)
    if tp is int:
        low = int(rules.low if rules.low is not None else 1)
        high = int(rules.high if rules.high is not None else 1000)
        try:
            value = int(raw)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise ApiError(
                400,
                f"query parameter {name}={raw!r} is out of range",
                field=name,
                expected=f"an integer from {low} to {high}",
            )
        return value
    if tp is bool:
        return raw in ("1", "true")
    if rules.choices is not None and raw not in rules.choices:
        raise ApiError(
            400,
            f"query parameter {name}={raw!r} is not allowed",
            field=name,
            expected=f"one of: {', '.join(rules.choices)}",
        )
    return raw


# ---------------------------------------------------------------- JSON Schema


def schema_of(tp: Any, refs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The JSON Schema (2020-12, as OpenAPI 3.1 takes it) of type ``tp``; a model is
    added to ``refs`` (the document's ``components/schemas``) and referred to."""
    tp, nullable = _nullable(tp)
    schema = _schema(tp, refs)
    if nullable:
        if set(schema) == {"type"} and isinstance(schema["type"], str):
            return {"type": [schema["type"], "null"]}
        return {"anyOf": [schema, {"type": "null"}]}
    return schema


def _schema(tp: Any, refs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if tp is Any or tp is object:
        return {}
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is type(None):
        return {"type": "null"}
    origin = get_origin(tp)
    if origin is typing.Literal:
        return {"enum": list(get_args(tp))}
    if origin in (list, tuple) or tp in (list, tuple):
        args = get_args(tp)
        return {"type": "array", "items": schema_of(args[0], refs) if args else {}}
    if origin in (dict, Mapping) or tp is dict:
        args = get_args(tp)
        return {
            "type": "object",
            "additionalProperties": schema_of(args[1], refs) if args else {},
        }
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [schema_of(a, refs) for a in get_args(tp)]}
    if attrs.has(tp):
        return model_ref(tp, refs)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [member.value for member in tp]}
    raise TypeError(f"no JSON Schema for API field type {tp!r}")


def model_ref(model: type[Any], refs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A ``$ref`` to ``model``'s schema, written into ``refs`` the first time."""
    name = model.__name__
    if name not in refs:
        refs[name] = {}  # taken first: a model may refer to itself
        refs[name] = model_schema(model, refs)
    return {"$ref": f"#/components/schemas/{name}"}


def model_schema(model: type[Any], refs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The object schema of ``model``: each field's type and rules; a response model's
    fields are all present (required), a request's only when its rules say so."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    response = getattr(model, "__api_response__", False)
    for attribute in fields_of(model):
        name = wire_name(attribute)
        rules = rules_of(attribute)
        prop = dict(rules.schema) if rules.schema is not None else schema_of(attribute.type, refs)
        _add_rules(prop, rules, attribute)
        properties[name] = prop
        if rules.required or (response and attribute.default is attrs.NOTHING):
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    doc = (model.__doc__ or "").strip()
    if doc:
        schema["description"] = " ".join(doc.split("\n\n")[0].split())
    if not response:
        schema["additionalProperties"] = False
    return schema


def _add_rules(prop: dict[str, Any], rules: Rules, attribute: attrs.Attribute[Any]) -> None:
    if rules.doc:
        prop["description"] = rules.doc
    target = prop
    if "anyOf" in prop:  # nullable: the rules are the non-null branch's
        target = prop["anyOf"][0]
    if rules.max_len is not None:
        target["maxLength"] = rules.max_len
    if rules.choices is not None:
        if _nullable(attribute.type)[1] and target is prop:  # one of them, or null
            prop.pop("type", None)
            prop["anyOf"] = [{"type": "string", "enum": list(rules.choices)}, {"type": "null"}]
        else:
            target["enum"] = list(rules.choices)
    if rules.pattern is not None:
        target["pattern"] = rules.pattern
    if rules.low is not None:
        target["minimum"] = rules.low
    if rules.high is not None:
        target["maximum"] = rules.high
    if rules.example is not None:
        prop["examples"] = [rules.example]
    default = attribute.default
    if (
        not rules.required
        and default is not attrs.NOTHING
        and not isinstance(default, attrs.Factory)  # type: ignore[arg-type]
        and default is not None
    ):
        prop["default"] = default


def response(cls: type[T]) -> type[T]:
    """Mark an attrs class as a response model: every field is always present, and
    more may come (``additionalProperties`` left open, for compatible growth)."""
    cls.__api_response__ = True  # type: ignore[attr-defined]
    return cls
