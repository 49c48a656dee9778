"""The ``file`` exporter: spans and metrics as JSON lines appended to one file.

Built on the SDK's console exporters (the same ``to_json`` of each span or metrics
batch) with an output file instead of stdout and one line per record, so another
program — or a test reading two runtimes' files — can read them back with ``json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import ConsoleSpanExporter


def _open(path: str) -> IO[str]:
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    return file.open("a", encoding="utf-8")


def _span_line(span: ReadableSpan) -> str:
    return str(span.to_json(indent=None)) + "\n"


def _metrics_line(data: MetricsData) -> str:
    return data.to_json(indent=None) + "\n"


class JsonLinesSpanExporter(ConsoleSpanExporter):
    """Each span as one JSON line (``context.trace_id``, ``context.span_id``,
    ``parent_id``, ``name``, ``attributes``, …) appended to ``path``."""

    def __init__(self, path: str) -> None:
        self.file = _open(path)
        super().__init__(out=self.file, formatter=_span_line)

    def shutdown(self) -> None:
        self.file.close()


class JsonLinesMetricExporter(ConsoleMetricExporter):
    """Each metrics batch as one JSON line (``resource_metrics``) appended to ``path``."""

    def __init__(self, path: str) -> None:
        self.file = _open(path)
        super().__init__(out=self.file, formatter=_metrics_line)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.file.close()


__all__: Sequence[str] = ("JsonLinesMetricExporter", "JsonLinesSpanExporter")
