"""The plugin's life in one runtime: telemetry up at start-up, a background sampler,
and a bounded flush at shutdown.

The sampler runs on the runtime's loop every ``metrics_interval_seconds``: it reads the
queue depths per thread group from the store and, when the exporters' health changed,
writes it to the store as the record ``toolang.otel.health`` — which ``toolang doctor``
(another process) reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs
import structlog

from toolang_otel.telemetry import Telemetry
from toolang_otel.turns import TurnTelemetry

if TYPE_CHECKING:
    from toolang_core import Runtime
    from toolang_otel.settings import OtelSettings

log = structlog.get_logger("toolang.otel")

HEALTH_KIND: Final = "toolang.otel.health"
HEALTH_KEY: Final = "exporters"


class OtelPlugin:
    """One runtime's telemetry and the task that keeps its gauges and health fresh."""

    def __init__(self, runtime: Runtime, settings: OtelSettings, **telemetry: Any) -> None:
        self.runtime = runtime
        path = Path(settings.path).expanduser()
        if settings.exporter == "file" and not path.is_absolute():
            settings = attrs.evolve(settings, path=str(runtime.config.home / path))
        self.settings = settings
        self.telemetry = Telemetry(
            settings,
            attributes={
                "service.instance.id": runtime.run_id or "",
                "host.name": socket.gethostname(),
                "process.pid": os.getpid(),
            },
            **telemetry,
        )
        self.turns = TurnTelemetry(
            self.telemetry, settings, default_agent=runtime.config.agents.default
        )
        self._task: asyncio.Task[None] | None = None
        self._written: dict[str, str] = {}
        self.final_metrics: Any = None
        """With the in-memory exporter: the metrics as they stood at shutdown."""

    @property
    def hang_seconds(self) -> float:
        """An export running longer than this is reported as hanging."""
        return self.settings.timeout_seconds * 2

    def start(self) -> None:
        self.sample()
        self._task = asyncio.get_running_loop().create_task(self._sampler(), name="otel-sampler")

    async def _sampler(self) -> None:
        while True:
            await asyncio.sleep(self.settings.metrics_interval_seconds)
            self.sample()

    def sample(self) -> None:
        """Refresh the queue depths and record the exporters' health if it changed."""
        try:
            self.turns.sample_queues(self.runtime)
            self.record_health()
        except Exception as exc:  # telemetry never stops the runtime
            log.warning("otel.sample_failed", error=f"{type(exc).__name__}: {exc}")

    def health(self) -> dict[str, Any]:
        signals = []
        if self.telemetry.tracer_provider is not None:
            signals.append(self.telemetry.span_health.to_json(self.hang_seconds))
        if self.telemetry.metric_reader is not None and self.settings.exporter != "memory":
            signals.append(self.telemetry.metric_health.to_json(self.hang_seconds))
        return {
            "run_id": self.runtime.run_id,
            "exporter": self.settings.exporter,
            "protocol": self.settings.protocol if self.settings.exporter == "otlp" else None,
            "endpoint": self.settings.endpoint,
            "signals": signals,
            "at": time.time(),
        }

    def record_health(self) -> None:
        store = self.runtime.store
        if store is None:
            return
        health = self.health()
        states = {s["signal"]: s["state"] for s in health["signals"]}
        if states == self._written:
            return
        for signal, state in states.items():
            if state in ("failing", "hanging") and self._written.get(signal) != state:
                info = next(s for s in health["signals"] if s["signal"] == signal)
                log.warning("otel.export_" + state, signal=signal, error=info["last_error"])
        store.put_record(HEALTH_KIND, HEALTH_KEY, health, now=time.time())
        self._written = states

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for span in list(self.turns.live.values()):  # turns cut off by the stop
            span.end()
        self.turns.live.clear()
        self.sample()
        reader = self.telemetry.metric_reader
        if self.settings.exporter == "memory" and reader is not None:
            self.final_metrics = reader.get_metrics_data()  # type: ignore[attr-defined]
        finished = await self.telemetry.shutdown()
        if not finished:
            log.warning(
                "otel.shutdown_timeout",
                seconds=self.settings.shutdown_timeout_seconds,
                detail="the exporter did not finish; spans still queued were dropped",
            )
        self.sample()
