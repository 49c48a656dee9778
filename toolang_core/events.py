"""Events published on the runtime's event bus (``toolang_on_event``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import attrs


def _now() -> datetime:
    return datetime.now(UTC)


@attrs.frozen
class Event:
    """Something that happened in the runtime, e.g. ``turn.completed`` or ``tool.called``.

    ``kind`` is a dotted name; ``data`` is JSON-able. The ids say where it happened when
    that is known.
    """

    kind: str
    data: Mapping[str, Any] = attrs.field(factory=dict)
    at: datetime = attrs.field(factory=_now)
    run_id: str | None = None
    thread_id: str | None = None
    turn_id: str | None = None
