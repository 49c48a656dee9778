"""The metrics a runtime's turns produce, read from the SDK's in-memory reader."""

from __future__ import annotations

from otel_kit import run_turn

import toolang_otel as plugin
from toolang_core.models.types import ModelResponse
from toolang_core.tools.types import ToolCall


def points(runtime):
    """``{metric name: [(attributes, value)]}`` as they stood at shutdown."""
    data = plugin.holder_of(runtime).last.final_metrics
    found: dict[str, list] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    value = getattr(point, "value", None)
                    if value is None:
                        value = (point.count, point.sum)
                    found.setdefault(metric.name, []).append((dict(point.attributes), value))
    return found


def test_a_turn_counts_in_every_metric_by_group_status_tool_and_token_type(agent_runtime):
    answers = iter(
        [
            ModelResponse(
                tool_calls=(ToolCall("c1", "lookup", {"term": "x"}),),
                usage={"input_tokens": 100, "output_tokens": 5},
                model="tiny-1",
            ),
            ModelResponse(
                text="done", usage={"input_tokens": 120, "output_tokens": 3}, model="tiny-1"
            ),
        ]
    )
    runtime = agent_runtime(lambda request: next(answers))
    run_turn(runtime)
    found = points(runtime)
    group = {"toolang.thread.group": "chat", "toolang.turn.source": "chat"}
    assert found["toolang.turns.started"] == [(group, 1)]
    assert found["toolang.turns.finished"] == [
        (group | {"toolang.turn.status": "completed", "toolang.turn.outcome": ""}, 1)
    ]
    (duration,) = found["toolang.turn.duration"]
    assert duration[0] == group | {"toolang.turn.status": "completed"}
    assert duration[1][0] == 1
    assert [a for a, _ in found["toolang.admission.duration"]] == [group]
    (tool,) = found["toolang.tool_call.duration"]
    assert tool[0] == {"gen_ai.tool.name": "lookup", "toolang.tool.outcome": "ok"}
    tokens = {a["gen_ai.token.type"]: v for a, v in found["gen_ai.client.token.usage"]}
    assert tokens == {"input": (2, 220), "output": (2, 8)}
    (calls,) = found["gen_ai.client.operation.duration"]
    assert calls[1][0] == 2
    assert found["toolang.queue.depth"] == [({"toolang.thread.group": "chat"}, 0)]

    # The OTLP exporter's encoder takes the plugin's histograms as the SDK's own.
    from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )

    sent = ExportMetricsServiceRequest.FromString(
        encode_metrics(plugin.holder_of(runtime).last.final_metrics).SerializeToString()
    )
    counts = {
        metric.name: [p.count for p in metric.histogram.data_points]
        for resource in sent.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.WhichOneof("data") == "histogram"
    }
    assert counts["gen_ai.client.operation.duration"] == [2]
    assert sorted(counts["gen_ai.client.token.usage"]) == [2, 2]


def test_a_histogram_counts_each_value_in_its_bucket_by_attribute_set():
    from opentelemetry.sdk.resources import Resource

    from toolang_otel.measures import Measures

    measures = Measures(Resource.create({}), "toolang")
    calls = measures.histogram(
        "calls", unit="s", description="", keys=("model", "error.type"), bounds=(0.1, 1.0)
    )
    for value in (0.05, 0.1, 0.5, 3.0):
        calls.record(value, ("m", None))
    calls.record(2.0, ("m", "model_error"))
    metric = calls.metric(1, 2)
    assert metric is not None
    points = {tuple(sorted(p.attributes.items())): p for p in metric.data.data_points}
    ok = points[(("model", "m"),)]
    assert (ok.count, ok.sum, ok.min, ok.max) == (4, 3.65, 0.05, 3.0)
    assert list(ok.bucket_counts) == [2, 1, 1]  # <= 0.1, <= 1, above
    failed = points[(("error.type", "model_error"), ("model", "m"))]
    assert (failed.count, list(failed.bucket_counts)) == (1, [0, 0, 1])
    assert (
        measures.histogram("empty", unit="", description="", keys=(), bounds=()).metric(1, 2)
        is None
    )


def test_the_histograms_follow_a_readers_delta_temporality():
    from opentelemetry.metrics import Observation
    from opentelemetry.sdk.metrics import Histogram, MeterProvider
    from opentelemetry.sdk.metrics.export import AggregationTemporality
    from opentelemetry.sdk.resources import Resource

    from toolang_otel.measures import Measures, MeteredMemoryReader

    resource = Resource.create({})
    measures = Measures(resource, "toolang")
    calls = measures.histogram("calls", unit="s", description="", keys=(), bounds=(1.0,))
    delta = {Histogram: AggregationTemporality.DELTA}
    reader = MeteredMemoryReader(measures, preferred_temporality=delta)
    provider = MeterProvider(resource=resource, metric_readers=[reader])
    # The SDK hands a reader a collection only when one of its instruments has data.
    provider.get_meter("toolang").create_observable_gauge(
        "up", callbacks=[lambda _options: [Observation(1)]]
    )

    def collected():
        data = reader.get_metrics_data()
        (metric,) = [
            m
            for resource_metrics in data.resource_metrics
            for scope in resource_metrics.scope_metrics
            for m in scope.metrics
            if m.name == "calls"
        ] or [None]
        return metric

    calls.record(0.5, ())
    calls.record(2.0, ())
    first = collected()
    assert first.data.aggregation_temporality is AggregationTemporality.DELTA
    assert [p.count for p in first.data.data_points] == [2]
    calls.record(3.0, ())
    (point,) = collected().data.data_points
    assert (point.count, point.sum, list(point.bucket_counts)) == (1, 3.0, [0, 1])
    assert point.start_time_unix_nano == first.data.data_points[0].time_unix_nano
    assert collected() is None  # nothing since
    provider.shutdown()
