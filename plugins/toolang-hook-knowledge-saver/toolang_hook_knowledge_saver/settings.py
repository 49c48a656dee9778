"""``[plugins.hook-knowledge-saver]``: which tool results are worth keeping."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

import attrs

NAME: Final = "hook-knowledge-saver"
"""The entry-point name: the settings section, the state key and the database file."""


def at_least(minimum: float) -> Callable[[Any, attrs.Attribute[Any], float], None]:
    """An attrs validator whose message names the key, e.g. ``min_chars: expected …``."""

    def check(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
        if value < minimum:
            raise ValueError(f"{attribute.name}: expected a number >= {minimum:g}, found {value}")

    return check


def compile_patterns(key: str, patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """Compile the regexes of setting ``key``.

    :raises ValueError: naming ``key[index]``, the pattern and what is wrong with it.
    """
    compiled = []
    for index, pattern in enumerate(patterns):
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise ValueError(
                f"{key}[{index}]: {pattern!r} is not a valid regular expression ({exc}); "
                "expected Python `re` syntax"
            ) from None
    return tuple(compiled)


def _regexes(_: Any, attribute: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
    compile_patterns(attribute.name, value)


@attrs.frozen
class KnowledgeSettings:
    """``[plugins.hook-knowledge-saver]``.

    A result is kept when its tool's name starts with one of ``tool_prefixes`` (empty:
    every tool), it succeeded (unless ``only_successful`` is false), its text has at
    least ``min_chars`` characters, it matches one of ``include`` (when any is given)
    and none of ``exclude``. Patterns are Python regexes searched anywhere in the text
    (add ``(?i)`` for case-insensitive).
    """

    tool_prefixes: tuple[str, ...] = ()
    min_chars: int = attrs.field(default=80, validator=at_least(1))
    max_chars: int = attrs.field(default=4_000, validator=at_least(100))
    """Stored content is cut here (the hash covers the whole text)."""
    include: tuple[str, ...] = attrs.field(default=(), validator=_regexes)
    exclude: tuple[str, ...] = attrs.field(default=(), validator=_regexes)
    only_successful: bool = True
    flush_seconds: float = attrs.field(default=1.0, validator=at_least(0))
    """Entries wait at most this long in memory before being written (0: write each)."""
    batch_size: int = attrs.field(default=100, validator=at_least(1))
    """Write at once when this many entries wait."""
