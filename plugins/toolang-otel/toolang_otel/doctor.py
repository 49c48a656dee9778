"""What ``toolang doctor`` says about OpenTelemetry: the configured exporter, whether an
OTLP collector answers, and how the serving runtime's exports went (the health record
it keeps in the store)."""

from __future__ import annotations

import socket
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolang_core import DoctorCheck, StoreError, StoreMissing
from toolang_otel.plugin import HEALTH_KEY, HEALTH_KIND
from toolang_otel.settings import NAME, OtelSettings

if TYPE_CHECKING:
    from toolang_core import Runtime

AREA = "otel"
PROBE_SECONDS = 2.0
DEFAULT_PORTS = {"grpc": 4317, "http/protobuf": 4318}


def checks(runtime: Runtime) -> list[DoctorCheck]:
    settings: OtelSettings = runtime.settings.get(NAME) or OtelSettings()
    if not settings.enabled:
        return [DoctorCheck(AREA, "info", "OpenTelemetry export is off ([plugins.otel] exporter)")]
    found = [DoctorCheck(AREA, "ok", f"OpenTelemetry exporter: {_describe(settings)}")]
    if settings.exporter == "otlp":
        found.append(_probe(settings))
    found.extend(_recorded(runtime))
    return found


def _describe(settings: OtelSettings) -> str:
    signals = " and ".join(
        s for s, on in (("traces", settings.traces), ("metrics", settings.metrics)) if on
    )
    if settings.exporter != "otlp":
        return f"{settings.exporter} ({signals})"
    where = settings.endpoint or "the SDK's default endpoint (OTEL_EXPORTER_OTLP_ENDPOINT)"
    return (
        f"OTLP over {settings.protocol} to {where} ({signals}, sampling {settings.sample_ratio:g})"
    )


def _probe(settings: OtelSettings) -> DoctorCheck:
    """Whether the collector accepts a connection (a TCP connect: no data is sent)."""
    url = urlsplit(settings.endpoint or f"http://localhost:{DEFAULT_PORTS[settings.protocol]}")
    host = url.hostname or "localhost"
    port = url.port or (443 if url.scheme == "https" else DEFAULT_PORTS[settings.protocol])
    try:
        with socket.create_connection((host, port), timeout=PROBE_SECONDS):
            pass
    except OSError as exc:
        return DoctorCheck(
            AREA,
            "warn",
            f"the OTLP collector at {host}:{port} does not answer: {exc}",
            ("spans and metrics are dropped until it does; turns are not affected",),
        )
    return DoctorCheck(AREA, "ok", f"the OTLP collector at {host}:{port} accepts connections")


def _recorded(runtime: Runtime) -> list[DoctorCheck]:
    try:
        store = runtime.open_store(read_only=True)
    except (StoreMissing, StoreError):
        return []  # the store check reports it
    try:
        record = store.get_record(HEALTH_KIND, HEALTH_KEY)
    finally:
        store.close()
    if record is None:
        return [DoctorCheck(AREA, "info", "no runtime has exported telemetry to this store yet")]
    data: dict[str, Any] = dict(record.data)
    age = time.time() - float(data.get("at") or record.updated_at)
    found = []
    for signal in data.get("signals", ()):
        state = signal.get("state")
        when = (
            f"{age:.0f} s ago"
            if age < 3600
            else time.strftime("%Y-%m-%d %H:%M", time.localtime(data.get("at", 0)))
        )
        counts = f"{signal.get('failures', 0)} of {signal.get('exports', 0)} exports failed"
        if state in ("failing", "hanging"):
            details = [counts]
            if signal.get("last_error"):
                details.append(f"last error: {signal['last_error']}")
            details.append('turns are not affected; fix the exporter or set exporter = "none"')
            found.append(
                DoctorCheck(
                    AREA,
                    "fail",
                    f"{signal['signal']} export was {state} (run {data.get('run_id')}, {when})",
                    tuple(details),
                )
            )
        else:
            found.append(
                DoctorCheck(AREA, "ok", f"{signal['signal']} export {state} ({counts}, {when})")
            )
    return found
