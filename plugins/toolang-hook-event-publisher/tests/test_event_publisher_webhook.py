"""The webhook sink against real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import logging

import structlog
from event_publisher_kit import run_turn

import toolang_hook_event_publisher as plugin
from toolang_core import TurnStatus
from toolang_core.testing.models import text, tool_call

FAST = "backoff_seconds = 0.01"


def webhook(url, *more: str) -> str:
    keys = ", ".join((FAST, *more))
    return f'kinds = ["turn.*"]\nsinks = [{{type = "webhook", url = "{url}", {keys}}}]\n'


def test_an_event_is_delivered_once_after_two_503_answers(agent_runtime, receiver):
    server = receiver([503, 503])
    runtime = agent_runtime([text("hello")], webhook(server.url))
    with structlog.testing.capture_logs() as logs:
        turn = run_turn(runtime)
    assert len(server.requests) == 3
    bodies = [r.body for r in server.requests]
    assert bodies[0] == bodies[1] == bodies[2]  # the same event, the same id, each time
    assert (bodies[0]["kind"], bodies[0]["turn_id"]) == ("turn.completed", turn.id)
    assert {r.headers["idempotency-key"] for r in server.requests} == {bodies[0]["id"]}
    stats = plugin.stats(runtime)["sinks[0]"]
    assert (stats.delivered, stats.failed) == (1, 0)
    assert [e["attempt"] for e in logs if e["event"] == "event_publisher.retrying"] == [1, 2]


def test_the_receiver_gets_json_and_the_configured_headers(agent_runtime, receiver):
    server = receiver()
    runtime = agent_runtime(
        [text("hello")],
        webhook(server.url, 'headers = {X-Team = "ops"}'),
    )
    run_turn(runtime)
    (request,) = server.requests
    assert (request.method, request.path) == ("POST", "/hook")
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-team"] == "ops"
    assert set(request.body) == {"id", "kind", "at", "run_id", "thread_id", "turn_id", "data"}


def test_a_client_error_is_not_retried(agent_runtime, receiver):
    server = receiver([400])
    runtime = agent_runtime([text("hello")], webhook(server.url))
    with structlog.testing.capture_logs() as logs:
        run_turn(runtime)
    assert len(server.requests) == 1
    assert plugin.stats(runtime)["sinks[0]"].failed == 1
    (failed,) = [e for e in logs if e["event"] == "event_publisher.delivery_failed"]
    assert "HTTP 400" in failed["error"]
    assert "not retried" in failed["error"]


def test_a_server_that_never_answers_never_holds_the_turn(agent_runtime, silent_url):
    runtime = agent_runtime(
        [tool_call("lookup", {"term": "x"}), text("done")],
        webhook(silent_url, "timeout_seconds = 0.2", "max_attempts = 2") + "flush_seconds = 60\n",
    )
    with structlog.testing.capture_logs() as logs:
        turn = run_turn(runtime)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "done")
    stats = plugin.stats(runtime)["sinks[0]"]
    assert (stats.delivered, stats.failed) == (0, 1)
    (failed,) = [e for e in logs if e["event"] == "event_publisher.delivery_failed"]
    assert "gave up" in failed["error"]
    assert "after 2 attempt(s)" in failed["error"]
    assert "Timeout" in failed["error"]


def test_events_still_queued_at_shutdown_are_counted_undelivered(agent_runtime, silent_url):
    runtime = agent_runtime(
        [text("hello")], webhook(silent_url, "timeout_seconds = 60") + "flush_seconds = 0\n"
    )
    with structlog.testing.capture_logs() as logs:
        turn = run_turn(runtime)
    assert turn.status is TurnStatus.COMPLETED
    stats = plugin.stats(runtime)["sinks[0]"]
    assert (stats.delivered, stats.failed, stats.undelivered) == (0, 0, 1)
    (lost,) = [e for e in logs if e["event"] == "event_publisher.events_lost"]
    assert (lost["sink"], lost["undelivered"]) == ("sinks[0]", 1)


def test_secret_headers_and_url_credentials_never_reach_the_logs(agent_runtime, receiver, caplog):
    server = receiver([503, 503, 503])
    url = server.url.replace("http://", "http://user:pw-in-url@") + "?key=query-secret"
    runtime = agent_runtime(
        [text("hello")],
        webhook(
            url,
            'headers = {X-Api-Token = "${HOOK_TOKEN}", X-Plain = "${OTHER}"}',
            "max_attempts = 3",
        ),
        env={"HOOK_TOKEN": "bearer-secret-1", "OTHER": "plain-named-secret-2"},
    )
    caplog.set_level(logging.DEBUG)  # httpx and httpcore log through the stdlib
    with structlog.testing.capture_logs() as logs:
        run_turn(runtime)
    assert server.requests[0].headers["x-api-token"] == "bearer-secret-1"
    assert server.requests[0].headers["x-plain"] == "plain-named-secret-2"
    assert [e["event"] for e in logs if e["event"].startswith("event_publisher.")] == [
        "event_publisher.retrying",
        "event_publisher.retrying",
        "event_publisher.delivery_failed",
        "event_publisher.events_lost",
    ]
    assert "HTTP Request: POST http://127.0.0.1:" in caplog.text  # httpx's own line, hidden
    everything = repr(logs) + caplog.text
    for secret in ("bearer-secret-1", "plain-named-secret-2", "pw-in-url", "query-secret"):
        assert secret not in everything, secret
