"""One runtime's OpenTelemetry: its tracer and meter providers, built from settings.

Everything here is the SDK's own: the providers, the ``BatchSpanProcessor`` (spans are
queued on ``end()`` and exported from the SDK's thread — never on a turn's path), the
``PeriodicExportingMetricReader``, and the console, OTLP and in-memory exporters. The
providers belong to the runtime, not to the process (no global provider is set): two
runtimes in one process keep their telemetry apart.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, MeterProvider
from opentelemetry.sdk.metrics.export import MetricExporter, MetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

from toolang_otel.measures import Measures, MeteredMemoryReader, MeteredPeriodicReader
from toolang_otel.watch import ExportHealth, WatchedMetricExporter, WatchedSpanExporter

if TYPE_CHECKING:
    from opentelemetry.metrics import Meter
    from opentelemetry.trace import Tracer

    from toolang_otel.settings import OtelSettings

SCOPE = "toolang"


def span_exporter(settings: OtelSettings) -> SpanExporter:
    """The SDK's span exporter ``settings`` name."""
    if settings.exporter == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        # The stdout of now, not of when the SDK was imported (its default argument).
        return ConsoleSpanExporter(out=sys.stdout)
    if settings.exporter == "memory":
        return InMemorySpanExporter()
    if settings.exporter == "file":
        from toolang_otel.jsonlines import JsonLinesSpanExporter

        return JsonLinesSpanExporter(settings.path)
    headers = {k: v.reveal() for k, v in settings.headers.items()}
    if settings.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcSpanExporter,
        )

        return GrpcSpanExporter(
            endpoint=settings.endpoint,
            insecure=_insecure(settings),
            headers=headers or None,
            timeout=settings.timeout_seconds,
        )
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(
        endpoint=_http_endpoint(settings, "traces"),
        headers=headers or None,
        timeout=settings.timeout_seconds,
    )


def metric_exporter(settings: OtelSettings) -> MetricExporter:
    """The SDK's metric exporter ``settings`` name (not for ``memory``)."""
    if settings.exporter == "console":
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        return ConsoleMetricExporter(out=sys.stdout)
    if settings.exporter == "file":
        from toolang_otel.jsonlines import JsonLinesMetricExporter

        return JsonLinesMetricExporter(settings.path)
    headers = {k: v.reveal() for k, v in settings.headers.items()}
    if settings.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
            OTLPMetricExporter as GrpcMetricExporter,
        )

        return GrpcMetricExporter(
            endpoint=settings.endpoint,
            insecure=_insecure(settings),
            headers=headers or None,
            timeout=settings.timeout_seconds,
        )
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter(
        endpoint=_http_endpoint(settings, "metrics"),
        headers=headers or None,
        timeout=settings.timeout_seconds,
    )


def _insecure(settings: OtelSettings) -> bool | None:
    if settings.endpoint is None:
        return None
    return settings.endpoint.startswith("http://")


def _http_endpoint(settings: OtelSettings, signal: str) -> str | None:
    """OTLP/HTTP posts each signal to ``<base>/v1/<signal>``; ``endpoint`` is the base
    (as ``OTEL_EXPORTER_OTLP_ENDPOINT`` is), unless it already names the path."""
    if settings.endpoint is None:
        return None
    base = settings.endpoint.rstrip("/")
    return base if base.endswith(f"/v1/{signal}") else f"{base}/v1/{signal}"


class TurnIds(RandomIdGenerator):
    """The SDK's random ids, except a trace id the plugin drew for the next root span
    (it decided to sample that turn with the same ratio sampler the SDK then asks) and
    a span id it promised a remote callee as its parent (``traceparent``) before the
    span — the model call's, made once the call is stored — existed."""

    def __init__(self) -> None:
        self.next_trace_id: int | None = None
        self.next_span_id: int | None = None

    def generate_trace_id(self) -> int:
        chosen, self.next_trace_id = self.next_trace_id, None
        return chosen if chosen is not None else super().generate_trace_id()

    def generate_span_id(self) -> int:
        chosen, self.next_span_id = self.next_span_id, None
        return chosen if chosen is not None else super().generate_span_id()


class Telemetry:
    """A runtime's providers, exporters and their health."""

    def __init__(
        self,
        settings: OtelSettings,
        *,
        span_exporter_factory: Callable[[OtelSettings], SpanExporter] = span_exporter,
        metric_exporter_factory: Callable[[OtelSettings], MetricExporter] = metric_exporter,
        attributes: dict[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        resource = Resource.create(
            {"service.name": settings.service_name, **(attributes or {}), **settings.resource}
        )
        self.span_health = ExportHealth("traces")
        self.root_sampler = TraceIdRatioBased(settings.sample_ratio)
        self.ids = TurnIds()
        self.metric_health = ExportHealth("metrics")
        self.span_exporter: SpanExporter | None = None
        self.tracer_provider: TracerProvider | None = None
        if settings.traces:
            self.span_exporter = span_exporter_factory(settings)
            self.tracer_provider = TracerProvider(
                resource=resource,
                sampler=ParentBased(self.root_sampler),
                id_generator=self.ids,
            )
            self.tracer_provider.add_span_processor(
                BatchSpanProcessor(
                    WatchedSpanExporter(self.span_exporter, self.span_health),
                    max_queue_size=settings.max_queue_size,
                    schedule_delay_millis=settings.schedule_delay_ms,
                    max_export_batch_size=min(512, settings.max_queue_size),
                )
            )
        self.metric_reader: MetricReader | None = None
        self.meter_provider: MeterProvider | None = None
        self.measures: Measures | None = None
        """The histograms, aggregated by the plugin and added to each collection."""
        if settings.metrics:
            self.measures = Measures(resource, SCOPE)
            if settings.exporter == "memory":
                self.metric_reader = MeteredMemoryReader(self.measures)
            else:
                self.metric_reader = MeteredPeriodicReader(
                    self.measures,
                    WatchedMetricExporter(metric_exporter_factory(settings), self.metric_health),
                    export_interval_millis=settings.metrics_interval_seconds * 1000,
                    export_timeout_millis=settings.timeout_seconds * 1000,
                )
            self.meter_provider = MeterProvider(
                resource=resource,
                metric_readers=[self.metric_reader],
                # Exemplars would look up the current span on every measurement; the
                # spans here are made after the fact, so there is none to link anyway.
                exemplar_filter=AlwaysOffExemplarFilter(),
            )
        self._closed = False

    def draw_root(self) -> int | None:
        """A trace id for a new root turn if the ratio sampler samples it, else ``None``
        (the turn then makes no span at all: a sampled-out span costs the SDK as much
        to make as the rest of the plugin's work on the turn)."""
        trace_id = random.getrandbits(128) or 1
        if trace_id & TraceIdRatioBased.TRACE_ID_LIMIT >= self.root_sampler.bound:
            return None
        self.ids.next_trace_id = trace_id
        return trace_id

    @property
    def tracer(self) -> Tracer | None:
        return self.tracer_provider.get_tracer(SCOPE) if self.tracer_provider else None

    @property
    def meter(self) -> Meter | None:
        return self.meter_provider.get_meter(SCOPE) if self.meter_provider else None

    def flush(self, timeout_seconds: float = 10.0) -> bool:
        """Export what is queued now (blocking, bounded by ``timeout_seconds``); for
        tests and ``doctor``. ``False`` when the exporter did not finish in time."""
        return _bounded(self._flush, timeout_seconds)

    def _flush(self) -> None:
        if self.tracer_provider is not None:
            self.tracer_provider.force_flush()

    async def shutdown(self) -> bool:
        """Flush and close the providers in a thread of their own, waiting at most
        ``shutdown_timeout_seconds``: a hung exporter never holds the runtime's stop.
        ``False`` when the time ran out (what was queued is lost)."""
        if self._closed:
            return True
        self._closed = True
        done = asyncio.get_running_loop().create_future()
        loop = asyncio.get_running_loop()

        def close() -> None:
            try:
                if self.tracer_provider is not None:
                    self.tracer_provider.shutdown()
                if self.meter_provider is not None:
                    self.meter_provider.shutdown(
                        timeout_millis=self.settings.shutdown_timeout_seconds * 1000
                    )
            finally:
                with contextlib.suppress(RuntimeError):  # the loop is gone after a timeout
                    loop.call_soon_threadsafe(_resolve, done)

        threading.Thread(target=close, name="toolang-otel-shutdown", daemon=True).start()
        try:
            await asyncio.wait_for(asyncio.shield(done), self.settings.shutdown_timeout_seconds)
        except TimeoutError:
            return False
        return True


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _bounded(work: Callable[[], None], timeout_seconds: float) -> bool:
    """Run ``work`` in a daemon thread; whether it finished within ``timeout_seconds``."""
    thread = threading.Thread(target=work, name="toolang-otel-flush", daemon=True)
    thread.start()
    thread.join(timeout_seconds)
    return not thread.is_alive()
