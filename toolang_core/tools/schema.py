"""JSON Schema for a tool's parameters, derived from its function's type hints."""

from __future__ import annotations

import enum
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Union, get_args, get_origin

_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}


CONTEXT_PARAMETER = "context"
"""A tool function parameter of this name receives the call's ToolCallContext."""


def takes_context(fn: Callable[..., Any]) -> bool:
    return CONTEXT_PARAMETER in inspect.signature(fn).parameters


class SchemaError(TypeError):
    """A parameter's annotation has no JSON Schema equivalent."""


def schema_for(annotation: Any, where: str) -> dict[str, Any]:
    """The JSON Schema of one annotation (``where`` names it in errors)."""
    if annotation in _SCALARS:
        return dict(_SCALARS[annotation])
    if annotation is Any or annotation is inspect.Parameter.empty:
        return {}
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        options = [schema_for(a, where) for a in args if a is not type(None)]
        nullable = type(None) in args
        schema = options[0] if len(options) == 1 else {"anyOf": options}
        if nullable:
            return {"anyOf": [schema, {"type": "null"}]}
        return schema
    if origin in (list, tuple, set, frozenset, Sequence, typing.Sequence) or annotation in (
        list,
        tuple,
        set,
        frozenset,
    ):
        items = args[0] if args else Any
        return {"type": "array", "items": schema_for(items, where)}
    if origin in (dict, Mapping, typing.Mapping) or annotation in (dict,):
        values = args[1] if len(args) == 2 else Any
        return {"type": "object", "additionalProperties": schema_for(values, where) or True}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return {"enum": [m.value for m in annotation]}
    raise SchemaError(
        f"{where}: cannot describe {annotation!r} as JSON Schema; use str, int, "
        "float, bool, list, dict, Literal, Enum or a union of them"
    )


_PARAM_DOC = re.compile(r":param\s+(\w+):\s*(.+?)(?=\n\s*:|\n\s*\n|\Z)", re.S)


def function_schema(fn: Callable[..., Any], name: str) -> tuple[str, dict[str, Any]]:
    """``(description, parameters schema)`` of ``fn``: a strict JSON Schema object.

    Parameters without a default are required; ``:param x:`` lines of the docstring
    describe parameters; the first paragraph of the docstring describes the tool. A
    parameter named ``context`` is left out: the chain passes the call's
    :class:`~toolang_core.tools.ToolCallContext` there.
    """
    hints = typing.get_type_hints(fn)
    doc = inspect.getdoc(fn) or ""
    description = doc.split("\n\n", 1)[0].replace("\n", " ").strip()
    described = {m.group(1): " ".join(m.group(2).split()) for m in _PARAM_DOC.finditer(doc)}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for pname, param in inspect.signature(fn).parameters.items():
        if pname == CONTEXT_PARAMETER:
            continue  # injected by the chain, never chosen by the model
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise SchemaError(f"tool {name}: *args/**kwargs cannot be described as parameters")
        prop = schema_for(hints.get(pname, Any), f"tool {name}, parameter {pname}")
        if pname in described:
            prop["description"] = described[pname]
        if param.default is param.empty:
            required.append(pname)
        elif param.default is not None:
            prop["default"] = param.default
        properties[pname] = prop
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return description, schema
