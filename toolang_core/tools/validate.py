"""Validate values against JSON Schemas: tool-call parameters before any hook runs, and
a typed answer (:mod:`toolang_core.turn.output`) before a turn completes with it."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any


class ParamsValidator:
    """Compiled validators, one per schema (fastjsonschema compiles to Python code)."""

    def __init__(self) -> None:
        self._compiled: dict[int, tuple[Mapping[str, Any], Callable[[Any], Any]]] = {}

    def problem(
        self, schema: Mapping[str, Any], params: Any, *, subject: str = "params"
    ) -> str | None:
        """A one-line description of what is wrong with ``params``, or ``None``; the
        message calls the value ``subject`` (``params.path must be string``)."""
        entry = self._compiled.get(id(schema))
        if entry is None or entry[0] is not schema:
            entry = (schema, _fastjsonschema().compile(dict(schema), use_default=False))
            self._compiled[id(schema)] = entry
        try:
            entry[1](params)
        except _fastjsonschema().JsonSchemaValueException as exc:  # evaluated on a raise only
            message: str = exc.message
            return message.replace("data", subject, 1)
        return None


def schema_problem(schema: Any) -> str | None:
    """What makes ``schema`` unusable as a JSON Schema (not an object, an unknown type, a
    keyword with a value of the wrong kind, a broken pattern), or ``None``.

    The schema is compiled the way :class:`ParamsValidator` will compile it, so a schema
    that passes here never fails later, in the middle of a turn."""
    if not isinstance(schema, Mapping):
        return f"expected a JSON Schema object, got {type(schema).__name__}"
    fastjsonschema = _fastjsonschema()
    try:
        fastjsonschema.compile(dict(schema), use_default=False)
    except fastjsonschema.JsonSchemaDefinitionException as exc:
        return f"not a valid JSON Schema: {exc}"
    except Exception as exc:  # a keyword of the wrong kind breaks the compiler itself
        return f"not a valid JSON Schema: {type(exc).__name__}: {exc}"
    return None


class SchemaError(ValueError):
    """A schema that cannot be used: not JSON, not a JSON Schema, or a missing file.
    The message names where it came from and what was expected."""


def check_schema(schema: Any, *, where: str) -> Mapping[str, Any]:
    """``schema`` if it is a usable JSON Schema object.

    :raises SchemaError: ``<where>: <what is wrong>``.
    """
    problem = schema_problem(schema)
    if problem is not None:
        raise SchemaError(f"{where}: {problem}")
    return dict(schema)


def read_schema_file(path: Path, *, where: str) -> Mapping[str, Any]:
    """The JSON Schema in the file ``path``.

    :raises SchemaError: naming ``where`` and the path when the file is missing, is not
        JSON, or does not hold a usable JSON Schema.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchemaError(f"{where}: schema file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"{where}: cannot read schema file {str(path)!r}: {exc}") from None
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SchemaError(
            f"{where}: schema file {str(path)!r} is not JSON (line {exc.lineno}, column "
            f"{exc.colno}: {exc.msg})"
        ) from None
    return check_schema(schema, where=f"{where} (file {str(path)!r})")


def load_schema(value: Any, *, where: str, base_dir: Path) -> Mapping[str, Any]:
    """An ``output_schema`` value as written in AGENT.md: a JSON Schema object inline,
    or the path of a ``.json`` file holding one (relative to ``base_dir``; ``~`` and
    environment variables expanded).

    :raises SchemaError: naming ``where``.
    """
    if isinstance(value, str):
        import os

        path = Path(os.path.expandvars(value)).expanduser()
        return read_schema_file(path if path.is_absolute() else base_dir / path, where=where)
    if not isinstance(value, Mapping):
        raise SchemaError(
            f"{where}: expected a JSON Schema (a mapping) or the path of a .json file "
            f"holding one, got {type(value).__name__}"
        )
    return check_schema(value, where=where)


@functools.cache
def _fastjsonschema() -> ModuleType:
    """Imported with the first tool call, not with the agent loop (a turn that calls no
    tool, a one-shot chat, never needs it); then found without an import statement."""
    import fastjsonschema

    return fastjsonschema
