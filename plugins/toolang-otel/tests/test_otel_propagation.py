"""W3C trace context in and out of a turn, in one process with the in-memory exporter:
each model call is handed a ``traceparent`` naming its own ``chat`` span, and a turn
whose request carries a caller's trace context is that caller's child. (Two real
processes over A2A: tests/integration/test_otel_trace_context.py.)"""

from __future__ import annotations

from otel_kit import by_name, serve

import toolang_otel as plugin
from toolang_core import TRACE_CONTEXT_META, NewTurnRequest, TurnStatus
from toolang_core.testing.models import text

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"


def spans_of(runtime):
    return list(plugin.holder_of(runtime).last.telemetry.span_exporter.get_finished_spans())


def run(runtime, meta=None):
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(
        NewTurnRequest(source="chat", thread_id="cli:t", input="go", meta=meta or {})
    ).id
    serve(runtime)
    return inbox.get(turn_id)


def test_each_model_call_is_handed_a_traceparent_naming_its_chat_span(
    agent_runtime, toolang_scripted_model
):
    model = toolang_scripted_model([text("done")])
    runtime = agent_runtime([], extra={"scripted": model.plugin()})
    turn = run(runtime)
    assert turn.status is TurnStatus.COMPLETED
    (request,) = model.calls
    version, trace_id, span_id, flags = request.headers["traceparent"].split("-")
    chat = by_name(spans_of(runtime))["chat scripted"]
    assert version == "00" and int(flags, 16) & 1  # sampled
    assert int(trace_id, 16) == chat.context.trace_id
    assert int(span_id, 16) == chat.context.span_id


def test_a_turn_sampled_out_tells_the_callee_not_to_record(agent_runtime, toolang_scripted_model):
    model = toolang_scripted_model([text("done")])
    runtime = agent_runtime(
        [],
        settings='exporter = "memory"\nsample_ratio = 0\n',
        extra={"scripted": model.plugin()},
    )
    run(runtime)
    (request,) = model.calls
    assert not int(request.headers["traceparent"][-2:], 16) & 1  # not sampled
    assert spans_of(runtime) == []


def test_a_turn_carrying_a_callers_trace_context_is_the_callers_child(agent_runtime):
    runtime = agent_runtime([text("done")], settings='exporter = "memory"\nsample_ratio = 0\n')
    carried = {"traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01", "tracestate": "v=1"}
    turn = run(runtime, {TRACE_CONTEXT_META: carried})
    root = by_name(spans_of(runtime))["invoke_agent assistant"]
    # the caller sampled its trace: followed even at a ratio of 0
    assert root.context.trace_id == int(CALLER_TRACE, 16)
    assert root.parent is not None and root.parent.is_remote
    assert root.parent.span_id == int(CALLER_SPAN, 16)
    assert root.context.trace_state.get("v") == "1"
    assert root.attributes["toolang.turn.id"] == turn.id
    assert root.attributes["toolang.turn.remote_parent"] is True


def test_a_caller_that_did_not_record_is_followed(agent_runtime):
    runtime = agent_runtime([text("done")])
    carried = {"traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-00"}
    run(runtime, {TRACE_CONTEXT_META: carried})
    assert spans_of(runtime) == []


def test_unusable_trace_context_starts_a_trace_of_its_own(agent_runtime):
    runtime = agent_runtime([text("done")])
    run(runtime, {TRACE_CONTEXT_META: {"traceparent": "not a traceparent"}})
    root = by_name(spans_of(runtime))["invoke_agent assistant"]
    assert root.parent is None and root.context.trace_id != int(CALLER_TRACE, 16)
