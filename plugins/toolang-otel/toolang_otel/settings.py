"""``[plugins.otel]``: where traces and metrics go, and what they may carry.

The core's converter checks types and unknown keys; the bounds and the checks that
span several keys run here and name the key they concern, e.g.
``toolang.toml: plugins.otel.sample_ratio: expected a number from 0 to 1, found 2``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal
from urllib.parse import urlsplit

import attrs

from toolang_core import Secret, redact_text

NAME: Final = "otel"
"""The entry-point name: the settings section and the per-runtime state key."""

ExporterName = Literal["none", "console", "file", "otlp", "memory"]
Protocol = Literal["http/protobuf", "grpc"]


def _at_least(minimum: float) -> Callable[[Any, attrs.Attribute[Any], float], None]:
    def check(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
        if value < minimum:
            raise ValueError(f"{attribute.name}: expected a number >= {minimum:g}, found {value}")

    return check


def _ratio(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{attribute.name}: expected a number from 0 to 1, found {value}")


def _endpoint(_: Any, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is None:
        return
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 -- raises ValueError for a port out of range
    except ValueError as exc:
        raise ValueError(
            f"{attribute.name}: expected an http:// or https:// URL, found "
            f"{redact_text(value)!r} ({exc})"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"{attribute.name}: expected an http:// or https:// URL with a host, found "
            f"{redact_text(value)!r}"
        )


@attrs.frozen(kw_only=True)
class OtelSettings:
    """``[plugins.otel]``.

    ``exporter`` picks where both signals go: ``none`` (the default: installed is not
    switched on), ``console`` (stdout), ``otlp`` (a collector, over ``protocol``
    ``http/protobuf`` or ``grpc``, at ``endpoint`` — else the SDK's default or
    ``OTEL_EXPORTER_OTLP_ENDPOINT``), ``file`` (JSON lines appended to ``path``, relative
    to the runtime's home: one span or one metrics batch per line, as the SDK's
    ``to_json`` writes it) or ``memory`` (kept in the process, for tests).
    ``traces`` / ``metrics`` switch a signal off. ``sample_ratio`` samples whole traces
    (a task run follows its parent): one turn in twenty by default, which keeps the
    plugin's own cost on the fastest turns near a twentieth (bench/otel.py); metrics count
    every turn whatever it is. Set it to 1 to trace every turn. ``record_content``
    adds tool arguments and results and model prompts and answers — as stored, after
    the SecurityFilter and the redaction policy masked them — cut to
    ``max_content_chars``.
    """

    exporter: ExporterName = "none"
    traces: bool = True
    metrics: bool = True
    protocol: Protocol = "http/protobuf"
    endpoint: str | None = attrs.field(default=None, validator=_endpoint)
    headers: Mapping[str, Secret] = attrs.field(factory=dict)
    path: str = "otel.jsonl"
    timeout_seconds: float = attrs.field(default=10.0, validator=_at_least(0.001))
    service_name: str = "toolang"
    resource: Mapping[str, str] = attrs.field(factory=dict)
    sample_ratio: float = attrs.field(default=0.05, validator=_ratio)
    record_content: bool = False
    max_content_chars: int = attrs.field(default=2_000, validator=_at_least(16))
    schedule_delay_ms: int = attrs.field(default=1_000, validator=_at_least(1))
    max_queue_size: int = attrs.field(default=2_048, validator=_at_least(1))
    metrics_interval_seconds: float = attrs.field(default=30.0, validator=_at_least(0.01))
    shutdown_timeout_seconds: float = attrs.field(default=5.0, validator=_at_least(0))

    def __attrs_post_init__(self) -> None:
        if not self.path.strip():
            raise ValueError("path: expected a file name (the file exporter's JSON lines)")
        if (
            self.exporter == "otlp"
            and self.protocol == "grpc"
            and importlib.util.find_spec("opentelemetry.exporter.otlp.proto.grpc") is None
        ):
            raise ValueError(
                "protocol: 'grpc' needs the package opentelemetry-exporter-otlp-proto-grpc "
                "(pip install 'toolang-otel[grpc]'), or use protocol = \"http/protobuf\""
            )

    @property
    def enabled(self) -> bool:
        return self.exporter != "none" and (self.traces or self.metrics)
