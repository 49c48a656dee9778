"""``[plugins.hook-learning-observer]``: what is kept, for how long, and what agents are told."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import attrs

NAME: Final = "hook-learning-observer"
"""The entry-point name: the settings section, the state key and the database file."""


def at_least(minimum: float) -> Callable[[Any, attrs.Attribute[Any], float], None]:
    """An attrs validator whose message names the key, e.g. ``window_calls: expected …``."""

    def check(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
        if value < minimum:
            raise ValueError(f"{attribute.name}: expected a number >= {minimum:g}, found {value}")

    return check


def _within_window(instance: LearningSettings, _: attrs.Attribute[Any], value: int) -> None:
    if value > instance.window_calls:
        raise ValueError(
            f"min_failures: expected at most window_calls ({instance.window_calls}), found "
            f"{value}; no tool could ever fail that often in its last {instance.window_calls} calls"
        )


@attrs.frozen
class LearningSettings:
    """``[plugins.hook-learning-observer]``.

    Notes: a tool gets a line in the agent's prompt when at least ``min_failures`` of
    its last ``window_calls`` calls by that agent failed and the latest failure is at
    most ``recent_hours`` old; at most ``max_notes`` tools are named (0 turns notes off)
    and the whole note is cut at ``max_note_chars``.
    """

    window_calls: int = attrs.field(default=5, validator=at_least(1))
    min_failures: int = attrs.field(default=2, validator=[at_least(1), _within_window])
    max_notes: int = attrs.field(default=3, validator=at_least(0))
    recent_hours: float = attrs.field(default=24.0, validator=at_least(0.01))
    max_note_chars: int = attrs.field(default=600, validator=at_least(80))
    max_error_chars: int = attrs.field(default=300, validator=at_least(20))
    keep_days: float = attrs.field(default=30.0, validator=at_least(0.01))
    """Outcomes older than this are deleted (at start-up, then at most hourly)."""
    flush_seconds: float = attrs.field(default=1.0, validator=at_least(0))
    """Outcomes wait at most this long in memory before being written (0: write each)."""
    batch_size: int = attrs.field(default=200, validator=at_least(1))
    """Write at once when this many outcomes wait."""
