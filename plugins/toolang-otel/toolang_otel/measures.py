"""The plugin's histograms, aggregated in plain Python and handed to the SDK's readers.

A measurement recorded through the SDK's ``Histogram.record`` costs ~5 µs (a
``Measurement`` made, its attributes cleaned and hashed, two locks): a turn makes five
to nine of them, more than the rest of the plugin's work on an unsampled turn. Here a
measurement costs a dict lookup and a ``bisect`` under one lock, into an explicit-bucket
histogram per attribute set (the SDK's own aggregation, cumulative); the readers the
plugin builds (:class:`MeteredPeriodicReader`, :class:`MeteredMemoryReader`) add the
histograms to every collection as the SDK's ``Metric``/``HistogramDataPoint`` data,
next to the SDK's own instruments, and the SDK's exporters send them.

The bucket boundaries are the GenAI semantic conventions' advice: durations in seconds
from 10 ms doubling to ~82 s (below 10 ms, the first bucket), token counts by powers
of four.
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any, Final

from opentelemetry.sdk.metrics import Histogram as SDKHistogram
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    Histogram,
    HistogramDataPoint,
    InMemoryMetricReader,
    Metric,
    MetricReader,
    MetricsData,
    PeriodicExportingMetricReader,
    ResourceMetrics,
    ScopeMetrics,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

SECONDS: Final = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip
"""Duration bucket boundaries (the GenAI conventions' ``gen_ai.client.operation.duration``)."""

TOKENS: Final = tuple(float(4**n) for n in range(14))
"""Token-count bucket boundaries (``gen_ai.client.token.usage``): 1, 4, 16, … 4**13."""


class _Point:
    """One attribute set's aggregation."""

    __slots__ = ("buckets", "count", "max", "min", "sum")

    def __init__(self, size: int) -> None:
        self.buckets = [0] * size
        self.count = 0
        self.sum = 0.0
        self.min = float("inf")
        self.max = float("-inf")


class Measure:
    """An explicit-bucket histogram, by the attribute values named in ``keys`` (passed to
    :meth:`record` in that order; a ``None`` value leaves its attribute out)."""

    def __init__(
        self,
        measures: Measures,
        name: str,
        *,
        unit: str,
        description: str,
        keys: Sequence[str],
        bounds: Sequence[float],
    ) -> None:
        self.name, self.unit, self.description = name, unit, description
        self.keys = tuple(keys)
        self.bounds = tuple(bounds)
        self._lock = measures.lock
        self._points: dict[tuple[Any, ...], _Point] = {}

    def record(self, value: float, labels: tuple[Any, ...]) -> None:
        """Count ``value`` for the attribute values ``labels`` (in the order of ``keys``)."""
        with self._lock:
            point = self._points.get(labels)
            if point is None:
                point = self._points[labels] = _Point(len(self.bounds) + 1)
            point.buckets[bisect_left(self.bounds, value)] += 1
            point.count += 1
            point.sum += value
            if value < point.min:  # noqa: PLR1730 -- a third of min()'s cost, per measurement
                point.min = value
            if value > point.max:  # noqa: PLR1730
                point.max = value

    def metric(
        self,
        start_ns: int,
        now_ns: int,
        temporality: AggregationTemporality = AggregationTemporality.CUMULATIVE,
    ) -> Metric | None:
        """The SDK's ``Metric`` of what was recorded since ``start_ns``, ``None`` for
        nothing; a delta one starts again from nothing (the caller holds the lock)."""
        if not self._points:
            return None
        points = [
            HistogramDataPoint(
                attributes={k: v for k, v in zip(self.keys, labels, strict=True) if v is not None},
                start_time_unix_nano=start_ns,
                time_unix_nano=now_ns,
                count=point.count,
                sum=point.sum,
                bucket_counts=tuple(point.buckets),
                explicit_bounds=self.bounds,
                min=point.min,
                max=point.max,
            )
            for labels, point in self._points.items()
        ]
        if temporality is AggregationTemporality.DELTA:
            self._points = {}
        data = Histogram(data_points=points, aggregation_temporality=temporality)
        return Metric(name=self.name, description=self.description, unit=self.unit, data=data)


class Measures:
    """The plugin's histograms, and what a reader adds to each collection of the SDK's."""

    def __init__(self, resource: Resource, scope: str) -> None:
        self.lock = threading.Lock()
        self.resource = resource
        self.scope = InstrumentationScope(scope)
        self.start_ns = time.time_ns()
        self.measures: list[Measure] = []

    def histogram(
        self,
        name: str,
        *,
        unit: str,
        description: str,
        keys: Sequence[str],
        bounds: Sequence[float],
    ) -> Measure:
        measure = Measure(self, name, unit=unit, description=description, keys=keys, bounds=bounds)
        self.measures.append(measure)
        return measure

    def merged(self, collected: MetricsData, temporality: AggregationTemporality) -> MetricsData:
        """``collected`` (the SDK's collection: one resource, the reader's provider's)
        with the histograms added to this scope's metrics, in the reader's
        ``temporality`` for histograms (cumulative unless the exporter prefers delta,
        e.g. ``OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE``)."""
        now_ns = time.time_ns()
        with self.lock:
            found = (h.metric(self.start_ns, now_ns, temporality) for h in self.measures)
            mine = [m for m in found if m]
            if temporality is AggregationTemporality.DELTA:
                self.start_ns = now_ns
        if not mine:
            return collected
        first, *others = collected.resource_metrics or (
            ResourceMetrics(resource=self.resource, scope_metrics=[], schema_url=""),
        )
        scopes = list(first.scope_metrics)
        for n, scope in enumerate(scopes):
            if scope.scope.name == self.scope.name:
                scopes[n] = ScopeMetrics(
                    scope=scope.scope, metrics=[*scope.metrics, *mine], schema_url=scope.schema_url
                )
                break
        else:
            scopes.append(ScopeMetrics(scope=self.scope, metrics=mine, schema_url=""))
        ours = ResourceMetrics(
            resource=first.resource, scope_metrics=scopes, schema_url=first.schema_url
        )
        return MetricsData(resource_metrics=[ours, *others])


class MeteredPeriodicReader(PeriodicExportingMetricReader):
    """The SDK's periodic exporting reader, exporting the plugin's histograms too."""

    def __init__(self, measures: Measures, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.measures = measures

    def _receive_metrics(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> None:
        merged = self.measures.merged(metrics_data, _histogram_temporality(self))
        super()._receive_metrics(merged, timeout_millis, **kwargs)


class MeteredMemoryReader(InMemoryMetricReader):
    """The SDK's in-memory reader (tests), keeping the plugin's histograms too."""

    def __init__(self, measures: Measures, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.measures = measures

    def _receive_metrics(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> None:
        merged = self.measures.merged(metrics_data, _histogram_temporality(self))
        super()._receive_metrics(merged, timeout_millis, **kwargs)


def _histogram_temporality(reader: MetricReader) -> AggregationTemporality:
    """The temporality ``reader`` collects the SDK's histograms in (its exporter's
    preference), for the plugin's to match."""
    chosen = reader._instrument_class_temporality  # the reader's own: a base class's
    return next(
        (t for kind, t in chosen.items() if issubclass(kind, SDKHistogram)),
        AggregationTemporality.CUMULATIVE,
    )
