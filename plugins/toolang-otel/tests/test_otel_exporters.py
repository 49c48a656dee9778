"""An exporter that raises or hangs never holds a turn up, and ``toolang doctor`` says so."""

from __future__ import annotations

import asyncio
import json
import socket

from otel_kit import HangingExporter, RaisingExporter, run_turn, serve, submit

import toolang_otel as plugin
from toolang_core import TurnStatus
from toolang_core.testing.models import text
from toolang_otel.plugin import HEALTH_KEY, HEALTH_KIND


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


FAST = (
    f'exporter = "otlp"\nendpoint = "http://127.0.0.1:{closed_port()}"\nsample_ratio = 1\n'
    "schedule_delay_ms = 5\ntimeout_seconds = 0.1\nshutdown_timeout_seconds = 0.5\n"
)


def test_an_exporter_that_raises_fails_no_turn_and_its_failure_is_recorded(agent_runtime):
    exporter = RaisingExporter()
    runtime = agent_runtime([text("one"), text("two")], FAST)
    plugin.holder_of(runtime).span_exporter_factory = lambda settings: exporter
    inbox, first = submit(runtime, "a", thread="cli:a")
    _, second = submit(runtime, "b", thread="cli:b")
    serve(runtime)
    assert inbox.get(first).status is TurnStatus.COMPLETED
    assert inbox.get(second).status is TurnStatus.COMPLETED
    assert exporter.calls >= 1
    store = runtime.open_store(read_only=True)
    try:
        record = store.get_record(HEALTH_KIND, HEALTH_KEY)
    finally:
        store.close()
    assert record is not None
    (traces,) = [s for s in record.data["signals"] if s["signal"] == "traces"]
    assert traces["state"] == "failing"
    assert "ConnectionError: collector refused the batch" in traces["last_error"]


def test_an_exporter_that_hangs_holds_up_neither_turns_nor_the_stop(agent_runtime):
    exporter = HangingExporter()

    async def answer(request):
        if request.messages[-1].content == "second":
            # This turn runs only once the exporter hangs on the first turn's spans.
            assert await asyncio.to_thread(exporter.entered.wait, 30)
            assert not exporter.release.is_set()
        return text("done")

    runtime = agent_runtime(answer, FAST, config="[scheduler]\nmax_running = 4\n")
    plugin.holder_of(runtime).span_exporter_factory = lambda settings: exporter
    inbox, first = submit(runtime, "first", thread="cli:a")
    _, second = submit(runtime, "second", thread="cli:b")
    try:
        serve(runtime)
        assert inbox.get(first).status is TurnStatus.COMPLETED
        assert inbox.get(second).status is TurnStatus.COMPLETED
        # The stop waited for the exporter at most shutdown_timeout_seconds (0.5 s), not
        # for the export, which still hangs now that the runtime has stopped.
        assert not exporter.returned.is_set()
    finally:
        exporter.release.set()


def test_doctor_reports_a_failing_exporter_and_an_unreachable_collector(
    agent_runtime, toolang_home, toolang_cli
):
    runtime = agent_runtime([text("one")], FAST)
    plugin.holder_of(runtime).span_exporter_factory = lambda settings: RaisingExporter()
    run_turn(runtime)
    toolang_home.write_config(
        f'[plugins.otel]\nexporter = "otlp"\nendpoint = "http://127.0.0.1:{closed_port()}"\n'
    )
    done = toolang_cli("doctor", "--json")
    findings = [f for f in json.loads(done.stdout) if f["area"] == "otel"]
    summaries = [(f["status"], f["summary"]) for f in findings]
    assert done.returncode == 1, summaries
    assert any(s == "warn" and "does not answer" in text for s, text in summaries), summaries
    (failing,) = [f for f in findings if f["summary"].startswith("traces export")]
    assert failing["status"] == "fail"
    assert failing["summary"].startswith("traces export was failing")
    assert any("collector refused the batch" in line for line in failing["details"])


def test_doctor_says_export_is_off_when_no_exporter_is_set(toolang_home, toolang_cli):
    done = toolang_cli("doctor", "--json")
    findings = [f for f in json.loads(done.stdout) if f["area"] == "otel"]
    assert [(f["status"], f["summary"]) for f in findings] == [
        ("info", "OpenTelemetry export is off ([plugins.otel] exporter)")
    ]


def test_the_console_exporter_prints_the_turns_spans(agent_runtime, capsys):
    runtime = agent_runtime(
        [text("hi")], 'exporter = "console"\nsample_ratio = 1\nmetrics = false\n'
    )
    run_turn(runtime)
    printed = capsys.readouterr().out
    assert '"name": "invoke_agent assistant"' in printed
    assert '"gen_ai.operation.name": "chat"' in printed


def test_otlp_settings_build_the_sdks_own_exporters_for_each_protocol():
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
        OTLPSpanExporter as GrpcSpanExporter,
    )
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from toolang_otel.settings import OtelSettings
    from toolang_otel.telemetry import metric_exporter, span_exporter

    http = OtelSettings(exporter="otlp", endpoint="http://collector:4318/")
    exporter = span_exporter(http)
    assert isinstance(exporter, OTLPSpanExporter)
    assert exporter._endpoint == "http://collector:4318/v1/traces"
    assert isinstance(metric_exporter(http), OTLPMetricExporter)
    grpc = OtelSettings(exporter="otlp", protocol="grpc", endpoint="http://collector:4317")
    assert isinstance(span_exporter(grpc), GrpcSpanExporter)


def test_the_file_exporter_appends_spans_and_metrics_as_json_lines(agent_runtime):
    settings = 'exporter = "file"\npath = "t/spans.jsonl"\nsample_ratio = 1\n'
    runtime = agent_runtime([text("done")], settings)
    turn = run_turn(runtime)
    assert turn.status is TurnStatus.COMPLETED
    path = runtime.config.home / "t" / "spans.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    metrics = [line for line in lines if "resource_metrics" in line]
    assert metrics, lines
    found = {
        metric["name"]: metric
        for line in metrics
        for resource in line["resource_metrics"]
        for scope in resource["scope_metrics"]
        for metric in scope["metrics"]
    }
    assert "toolang.turns.finished" in found
    # The histograms the plugin aggregates itself reach the exporter with the SDK's own.
    (point,) = found["toolang.turn.duration"]["data"]["data_points"]
    assert point["count"] == 1
    assert sum(point["bucket_counts"]) == 1
    assert point["attributes"]["toolang.turn.status"] == "completed"
    (call,) = found["gen_ai.client.operation.duration"]["data"]["data_points"]
    assert call["count"] == 1
    assert "error.type" not in call["attributes"]
    spans = [line for line in lines if "context" in line]
    assert all(
        s["attributes"]["toolang.turn.id"] == turn.id for s in spans if s["parent_id"] is None
    )
