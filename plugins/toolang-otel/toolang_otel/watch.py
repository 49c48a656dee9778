"""The SDK's exporters, watched: what became of each export, for ``toolang doctor``.

A watched exporter hands every batch to the SDK exporter it wraps and notes the result
— success, a failure it reported, an exception (caught here: it never reaches the
batch processor's thread loop), or an export still running. It runs on the SDK's own
export thread, never on a turn's path.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any, Literal

import attrs
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from toolang_core import redact_text

State = Literal["idle", "ok", "failing", "hanging"]


@attrs.define
class ExportHealth:
    """Counts and the latest failure of one signal's exports (thread-safe)."""

    signal: str
    exports: int = 0
    failures: int = 0
    last_error: str | None = None
    last_error_at: float | None = None
    last_ok_at: float | None = None
    in_flight_since: float | None = None
    _lock: threading.Lock = attrs.field(factory=threading.Lock, repr=False)

    def begin(self) -> None:
        with self._lock:
            self.in_flight_since = time.time()

    def succeeded(self) -> None:
        with self._lock:
            self.exports += 1
            self.in_flight_since = None
            self.last_ok_at = time.time()

    def failed(self, error: str) -> None:
        with self._lock:
            self.exports += 1
            self.failures += 1
            self.in_flight_since = None
            self.last_error = redact_text(error)[:500]
            self.last_error_at = time.time()

    def state(self, hang_seconds: float, now: float | None = None) -> State:
        """``hanging`` when an export has run longer than ``hang_seconds``; ``failing``
        when the latest finished export failed; ``ok`` after a success; else ``idle``."""
        now = time.time() if now is None else now
        with self._lock:
            if self.in_flight_since is not None and now - self.in_flight_since > hang_seconds:
                return "hanging"
            if self.last_error_at is not None and (
                self.last_ok_at is None or self.last_error_at >= self.last_ok_at
            ):
                return "failing"
            return "ok" if self.last_ok_at is not None else "idle"

    def to_json(self, hang_seconds: float) -> dict[str, Any]:
        state = self.state(hang_seconds)
        with self._lock:
            return {
                "signal": self.signal,
                "state": state,
                "exports": self.exports,
                "failures": self.failures,
                "last_error": self.last_error,
                "last_error_at": self.last_error_at,
                "last_ok_at": self.last_ok_at,
                "in_flight_since": self.in_flight_since,
            }


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class WatchedSpanExporter(SpanExporter):
    """A span exporter that records what became of each export in ``health``."""

    def __init__(self, inner: SpanExporter, health: ExportHealth) -> None:
        self.inner = inner
        self.health = health

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.health.begin()
        try:
            result = self.inner.export(spans)
        except Exception as exc:
            self.health.failed(_describe(exc))
            return SpanExportResult.FAILURE
        if result is SpanExportResult.SUCCESS:
            self.health.succeeded()
        else:
            self.health.failed(f"{type(self.inner).__name__} reported a failed export")
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.inner.force_flush(timeout_millis)


class WatchedMetricExporter(MetricExporter):
    """A metric exporter that records what became of each export in ``health``."""

    def __init__(self, inner: MetricExporter, health: ExportHealth) -> None:
        # The wrapped exporter's preferences (cumulative or delta, aggregations) hold.
        super().__init__(
            preferred_temporality=inner._preferred_temporality,
            preferred_aggregation=inner._preferred_aggregation,
        )
        self.inner = inner
        self.health = health

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        self.health.begin()
        try:
            result = self.inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)
        except Exception as exc:
            self.health.failed(_describe(exc))
            return MetricExportResult.FAILURE
        if result is MetricExportResult.SUCCESS:
            self.health.succeeded()
        else:
            self.health.failed(f"{type(self.inner).__name__} reported a failed export")
        return result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.inner.shutdown(timeout_millis=timeout_millis, **kwargs)
