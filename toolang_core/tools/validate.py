"""Validate tool-call parameters against a tool's JSON Schema, before any hook runs."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any


class ParamsValidator:
    """Compiled validators, one per schema (fastjsonschema compiles to Python code)."""

    def __init__(self) -> None:
        self._compiled: dict[int, tuple[Mapping[str, Any], Callable[[Any], Any]]] = {}

    def problem(self, schema: Mapping[str, Any], params: Any) -> str | None:
        """A one-line description of what is wrong with ``params``, or ``None``."""
        entry = self._compiled.get(id(schema))
        if entry is None or entry[0] is not schema:
            entry = (schema, _fastjsonschema().compile(dict(schema), use_default=False))
            self._compiled[id(schema)] = entry
        try:
            entry[1](params)
        except _fastjsonschema().JsonSchemaValueException as exc:  # evaluated on a raise only
            message: str = exc.message
            return message.replace("data", "params", 1)
        return None


@functools.cache
def _fastjsonschema() -> ModuleType:
    """Imported with the first tool call, not with the agent loop (a turn that calls no
    tool, a one-shot chat, never needs it); then found without an import statement."""
    import fastjsonschema

    return fastjsonschema
