"""JSON to the generated models (cattrs: unknown keys a newer server adds are ignored)."""

from __future__ import annotations

from typing import Any, TypeVar

import cattrs

T = TypeVar("T")
_converter = cattrs.Converter()


def structure(data: Any, model: type[T]) -> T:
    """``data`` (decoded JSON) as ``model``.

    :raises cattrs.BaseValidationError: when it does not fit."""
    return _converter.structure(data, model)


def unstructure(value: Any) -> Any:
    return _converter.unstructure(value)
