"""llm's (and its SDKs') exceptions become classified ``ModelError``s: the agent loop
retries the transient ones and never the others. Through llm's real OpenAI plugin and
openai client talking to a local server (the model boundary)."""

from __future__ import annotations

import openai
import pytest
from model_llm_kit import agent_runtime, chat_reply, run_turn

from toolang_core import TurnStatus
from toolang_model_llm.errors import classify, from_llm, retry_after

try:  # the HTTP client the installed openai speaks: httpx2 since openai 3, httpx before
    import httpx2 as httpx
except ImportError:  # pragma: no cover - an older openai
    import httpx  # type: ignore[no-redef]

FAST = "\n[models.retry]\ninitial_wait_seconds = 0.01\nmax_wait_seconds = 0.05\n"
NO_SDK_RETRY = {"x-should-retry": "false"}  # the openai client's own retries stay out


@pytest.fixture(autouse=True)
def _allowed(monkeypatch):
    # The only server these calls reach is the test's own, on 127.0.0.1.
    monkeypatch.setenv("TOOLANG_ALLOW_MODEL_REQUESTS", "1")


def status_error(status: int, body: dict | None = None, headers: dict | None = None):
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(status, json=body or {}, headers=headers, request=request)
    error = (body or {}).get("error")
    client = openai.OpenAI(api_key="k", base_url="http://127.0.0.1/v1")
    return client._make_status_error("failed", body=error, response=response)


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, "rate_limit"),
        (503, "overloaded"),
        (500, "server"),
        (502, "server"),
        (401, "auth"),
        (403, "auth"),
        (404, "not_found"),
        (400, None),
        (422, None),
    ],
)
def test_http_statuses_are_classified(status, kind):
    assert classify(status_error(status)) == kind


def test_connection_and_timeout_errors_are_transient():
    request = httpx.Request("POST", "http://127.0.0.1/v1")
    assert classify(openai.APITimeoutError(request=request)) == "timeout"
    assert classify(openai.APIConnectionError(request=request)) == "connection"
    assert classify(ConnectionResetError()) == "connection"
    assert classify(ValueError("x")) is None


def test_a_used_up_quota_is_not_a_rate_limit_and_a_content_filter_is_a_refusal():
    quota = status_error(429, {"error": {"message": "quota", "code": "insufficient_quota"}})
    assert classify(quota) is None
    refused = status_error(400, {"error": {"message": "no", "code": "content_filter"}})
    assert classify(refused) == "refused"


def test_retry_after_is_read_from_the_response_headers():
    assert retry_after(status_error(429, headers={"retry-after": "7"})) == 7
    assert retry_after(status_error(429, headers={"retry-after-ms": "250"})) == 0.25
    assert retry_after(status_error(429, headers={"retry-after": "Wed, 21 Oct"})) is None
    assert retry_after(ValueError()) is None
    error = from_llm(status_error(429, headers={"retry-after": "2"}), object())
    assert (error.kind, error.transient, error.retry_after) == ("rate_limit", True, 2)


def test_a_rate_limited_provider_is_called_again_and_answers(toolang_runtime, chat_server):
    limited = {"error": {"message": "Rate limit reached", "type": "requests"}}
    headers = {**NO_SDK_RETRY, "retry-after-ms": "10"}
    chat_server.replies += [(429, limited, headers), (200, chat_reply("Here I am."))]
    runtime = agent_runtime(toolang_runtime, "llm/local-chat", extra=FAST)
    turn, steps = run_turn(runtime, "hello")
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "Here I am.")
    assert len(chat_server.requests) == 2
    failed, done = [s for s in steps if s.kind == "model_call"]
    assert (failed.data["error_kind"], failed.data["next"]) == ("rate_limit", "retry")
    assert failed.data["wait_seconds"] >= 0.01  # the provider's Retry-After at least
    assert "RateLimitError" in failed.error
    assert done.status == "completed"


def test_a_bad_key_is_not_retried(toolang_runtime, chat_server):
    bad = {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
    chat_server.replies += [(401, bad, NO_SDK_RETRY)]
    runtime = agent_runtime(toolang_runtime, "llm/local-chat", extra=FAST)
    turn, steps = run_turn(runtime, "hello")
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert len(chat_server.requests) == 1
    [failed] = [s for s in steps if s.kind == "model_call"]
    assert (failed.data["error_kind"], failed.data["next"]) == ("auth", "give_up")


def test_an_unknown_llm_model_is_not_found(toolang_runtime, chat_server):
    runtime = agent_runtime(toolang_runtime, "llm/no-such-model", extra=FAST)
    turn, steps = run_turn(runtime, "hello")
    assert turn.outcome == "model_error"
    [failed] = [s for s in steps if s.kind == "model_call"]
    assert failed.data["error_kind"] == "not_found"
