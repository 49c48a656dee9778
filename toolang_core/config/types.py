"""Value types for configuration fields that need more than a builtin type."""

from __future__ import annotations

from typing import NewType

import attrs

EnvStr = NewType("EnvStr", str)
"""A string in which ``${NAME}`` and ``${NAME:-default}`` are expanded at load time."""


@attrs.frozen(repr=False)
class Secret:
    """A sensitive string (an API key, a password): never shown in repr, logs or traces.

    Written as a plain string (``${ENV}`` expanded) in the file. Use
    :meth:`reveal` at the single place the value is really needed.
    """

    _value: str

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    __str__ = __repr__
