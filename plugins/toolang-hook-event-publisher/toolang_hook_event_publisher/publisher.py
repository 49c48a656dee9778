"""The publisher of one runtime: its outlets, the kinds each takes, and shutdown."""

from __future__ import annotations

import asyncio
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

import attrs
import structlog

from toolang_hook_event_publisher.outlet import Outlet, SinkStats
from toolang_hook_event_publisher.records import event_record
from toolang_hook_event_publisher.settings import PublisherSettings
from toolang_hook_event_publisher.sinks import build_sink

if TYPE_CHECKING:
    from toolang_core import Event, RuntimeView

log = structlog.get_logger("toolang.event_publisher")


def matches(kind: str, patterns: tuple[str, ...]) -> bool:
    """Whether ``kind`` matches one of the glob ``patterns`` (case-sensitive)."""
    return any(fnmatchcase(kind, pattern) for pattern in patterns)


class Publisher:
    """Forwards bus events to the configured sinks, in the background."""

    def __init__(self, settings: PublisherSettings) -> None:
        self.settings = settings
        self.outlets: list[Outlet] = []
        for index, sink in enumerate(settings.sinks):
            label = sink.name or f"sinks[{index}]"
            kinds = sink.kinds if sink.kinds is not None else settings.kinds
            self.outlets.append(Outlet(label, build_sink(sink, label), kinds, settings.queue_size))
        self._listened: bool | None = None

    def listened(self, runtime: RuntimeView, name: str) -> bool:
        """Whether an event would reach anyone: a sink of ours, or a subscriber other than
        this plugin (``name``). Plugins are fixed for a runtime's life, so the answer is
        kept: it is asked on every tool call."""
        if self._listened is None:
            subscribers = runtime.plugins.implementations("toolang_on_event")
            self._listened = bool(self.outlets or [p for p in subscribers if p != name])
        return self._listened

    def accept(self, event: Event) -> int:
        """Queue ``event`` for every sink that takes its kind; returns how many do.

        Never waits; must be called from the runtime's event loop.
        """
        outlets = [o for o in self.outlets if matches(event.kind, o.kinds)]
        if outlets:
            record = event_record(event)
            for outlet in outlets:
                outlet.offer(record)  # sinks only read records, so they can share one
        return len(outlets)

    def stats(self) -> dict[str, SinkStats]:
        """A snapshot of every sink's counters, by sink label."""
        return {outlet.label: attrs.evolve(outlet.stats) for outlet in self.outlets}

    async def shutdown(self, reason: str) -> None:
        """Give the queues ``flush_seconds`` to drain, stop the workers and report."""
        if not self.outlets:
            return
        deadline = asyncio.get_running_loop().time() + self.settings.flush_seconds
        await asyncio.gather(*(outlet.flush(deadline) for outlet in self.outlets))
        for outlet in self.outlets:
            await outlet.close()
        for label, stats in self.stats().items():
            fields = attrs.asdict(stats)
            if stats.lost:
                log.warning("event_publisher.events_lost", sink=label, reason=reason, **fields)
            else:
                log.info("event_publisher.stopped", sink=label, reason=reason, **fields)
