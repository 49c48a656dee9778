"""W3C trace context across processes without a tracing library in the core: inbound
headers checked into a turn request's metadata, outbound headers from plugins handed to
each model call (``toolang_outbound_headers`` → ``ModelRequest.headers``)."""

from __future__ import annotations

import asyncio

import pytest

from toolang_core import TRACE_CONTEXT_META, NewTurnRequest, hookimpl, trace_context_meta
from toolang_core.testing.models import text
from toolang_core.tracecontext import trace_context_of

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
PARENT = f"00-{TRACE}-{SPAN}-01"


def test_a_valid_traceparent_and_its_tracestate_are_kept_whatever_the_header_case():
    headers = {"TraceParent": f" {PARENT} ", "TRACESTATE": "rojo=00f067aa0ba902b7,congo=t61"}
    assert trace_context_of(headers) == {
        "traceparent": PARENT,
        "tracestate": "rojo=00f067aa0ba902b7,congo=t61",
    }
    assert trace_context_meta(headers) == {TRACE_CONTEXT_META: trace_context_of(headers)}


@pytest.mark.parametrize(
    "traceparent",
    [
        "",
        "garbage",
        f"ff-{TRACE}-{SPAN}-01",  # the forbidden version
        f"00-{'0' * 32}-{SPAN}-01",  # an all-zero trace id
        f"00-{TRACE}-{'0' * 16}-01",  # an all-zero parent id
        f"00-{TRACE.upper()}-{SPAN}-01",  # not lowercase
        f"00-{TRACE}-{SPAN}",  # no flags
    ],
)
def test_a_malformed_traceparent_is_no_trace_context(traceparent):
    headers = {"traceparent": traceparent, "tracestate": "a=b"}
    assert trace_context_of(headers) == {}
    assert trace_context_meta(headers) == {}


def test_a_tracestate_too_long_or_unprintable_is_dropped_and_the_traceparent_kept():
    for state in ("k=" + "v" * 600, "k=\x01v"):
        assert trace_context_of({"traceparent": PARENT, "tracestate": state}) == {
            "traceparent": PARENT
        }


class HeaderPlugin:
    def __init__(self, headers):
        self.headers = headers
        self.asked = []

    @hookimpl
    def toolang_outbound_headers(self, turn, key, runtime):
        self.asked.append((turn.id, key))
        return self.headers


class BrokenHeaders:
    @hookimpl
    def toolang_outbound_headers(self, turn, key, runtime):
        raise RuntimeError("header bug")


def run_turn(runtime):
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="go")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    return inbox.get(turn_id)


CONFIG = '[models]\ndefault = "scripted"\n[runtime]\nexecutor = "agent"\npoll_seconds = 0.05\n'


def test_plugins_headers_reach_each_model_call_merged_in_call_order(
    toolang_runtime, toolang_scripted_model
):
    model = toolang_scripted_model([text("done")])
    first = HeaderPlugin({"traceparent": "first", "x-one": "1"})
    second = HeaderPlugin({"traceparent": PARENT})
    runtime = toolang_runtime(
        CONFIG,
        plugins={
            "scripted": model.plugin(),
            "first": first,
            "broken": BrokenHeaders(),
            "second": second,
        },
    )
    turn = run_turn(runtime)
    assert turn.status == "completed"  # the broken plugin is skipped
    (request,) = model.calls
    order = runtime.host.hooks.implementations("toolang_outbound_headers")
    assert set(order) == {"first", "second", "broken"}
    last = {"first": first, "second": second}[[n for n in order if n != "broken"][-1]]
    assert request.headers == {"x-one": "1", "traceparent": last.headers["traceparent"]}
    assert first.asked == second.asked == [(turn.id, request.key)]


def test_without_a_plugin_a_model_call_has_no_headers(toolang_runtime, toolang_scripted_model):
    model = toolang_scripted_model([text("done")])
    runtime = toolang_runtime(CONFIG, plugins={"scripted": model.plugin()})
    assert run_turn(runtime).status == "completed"
    (request,) = model.calls
    assert dict(request.headers) == {}
