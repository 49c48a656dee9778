"""attrs validators whose messages read well in a configuration error."""

from __future__ import annotations

from typing import Any

import attrs

from toolang_core.config.converter import KeyProblems


def at_least(minimum: float, *, optional: bool = False) -> Any:
    """Require a number ``>= minimum`` (or ``None`` when ``optional``)."""

    def check(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is None and optional:
            return
        if value < minimum:
            raise KeyProblems([((attribute.name,), f"expected a number >= {minimum}, found {value}")])

    return check
