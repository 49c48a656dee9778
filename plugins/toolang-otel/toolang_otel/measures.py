"""Histogram measurements waiting for the SDK's next collection, kept as plain floats.

A turn makes about five histogram measurements (admission, duration, each model call,
the tool call). Recorded one by one between a turn's steps they cost the SDK several
microseconds each; queued as a tuple and a dict each, they live until the next
collection (every ``metrics_interval_seconds``) and every garbage collection in between
walks them. Here a measurement is a float appended to the list of its instrument and
attribute set — floats are not tracked by the garbage collector, and the attribute dict
is made once per set — and the SDK takes them all when it collects, in its reader's
thread.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from opentelemetry.metrics import Histogram

Labels = tuple[tuple[str, str], ...]
"""An attribute set as ``((name, value), ...)``: hashable, made without a dict."""

LIMIT: Final = 50_000
"""Measurements kept for the next collection at most: only a collection that stopped
(e.g. behind a hung exporter) lets this many pile up; later ones are dropped."""


class Measures:
    """Pending measurements by ``(instrument, attribute set)``; safe from any thread."""

    __slots__ = ("_lock", "_values", "count", "dropped", "limit")

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self.count = 0
        self.dropped = 0
        """Measurements not kept because ``limit`` were pending."""
        self._values: dict[tuple[Histogram, Labels], list[float]] = {}
        self._lock = threading.Lock()

    def add(self, instrument: Histogram, value: float, labels: Labels) -> None:
        with self._lock:
            if self.count >= self.limit:
                self.dropped += 1
                return
            self.count += 1
            values = self._values.get((instrument, labels))
            if values is None:
                self._values[(instrument, labels)] = [value]
            else:
                values.append(value)

    def record(self) -> None:
        """Hand every pending measurement to its instrument (the SDK aggregates them)."""
        with self._lock:
            taken, self._values, self.count = self._values, {}, 0
        for (instrument, labels), values in taken.items():
            attributes: dict[str, Any] = dict(labels)
            for value in values:
                instrument.record(value, attributes)

    def __len__(self) -> int:
        return self.count
