"""The client against a real ``toolang run``: submit and wait, streams, retries."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from server_helpers import TOKENS

from toolang_client import (
    AsyncClient,
    Client,
    Conflict,
    Forbidden,
    NotFound,
    Retry,
    TransportError,
    Unauthorized,
    models,
)


def test_submit_and_wait_then_stream_whose_text_equals_the_stored_output(served):
    with Client(served.url, token=TOKENS["alice"]) as client:
        turn = client.run("hello there", thread_id="chat:c1")
        assert (turn.status, turn.output, turn.owner) == ("completed", "echo: hello there", "alice")
        with client.stream("say more words now", thread_id="chat:c1") as stream:
            events = list(stream)
        stored = client.turn(stream.turn_id)
        assert stream.text == stored.output == "echo: say more words now"
        assert isinstance(events[-1], models.FinishedEvent)
        assert events[-1].status == "completed"
        assert [t.id for t in client.thread("chat:c1").turns] == [turn.id, stored.id]


def test_the_async_client_waits_and_streams_the_same(served):
    async def main() -> tuple[models.Turn, str, str]:
        async with AsyncClient(served.url, token=TOKENS["alice"]) as client:
            turn = await client.run("async hello", thread_id="chat:a1")
            stream = await client.stream("async words", thread_id="chat:a1")
            async with stream:
                async for _event in stream:
                    pass
            stored = await client.turn(stream.turn_id or "")
            return turn, stream.text, stored.output

    turn, streamed, stored = asyncio.run(main())
    assert (turn.status, turn.output) == ("completed", "echo: async hello")
    assert streamed == stored == "echo: async words"


def test_a_wrong_token_and_another_owners_thread_are_refused(served):
    with Client(served.url, token="not-a-token-at-all") as stranger:
        with pytest.raises(Unauthorized) as refused:
            stranger.turns()
        assert refused.value.status == 401
    with Client(served.url, token=TOKENS["bob"]) as bob:
        bob.run("bob's own words", thread_id="chat:bob")
    with Client(served.url, token=TOKENS["alice"]) as alice:
        with pytest.raises(NotFound) as unseen:
            alice.thread("chat:bob")
        assert unseen.value.field == "thread_id"
        with pytest.raises(Forbidden) as not_hers:
            alice.submit("let me in", thread_id="chat:bob")
        assert not_hers.value.field == "thread_id" and "another owner" in not_hers.value.message


class DropFirstAnswer(httpx.BaseTransport):
    """Sends every request; loses the first submit's answer on the way back, as a
    connection that breaks after the server did the work."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.dropped = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method == "POST" and request.url.path == "/api/turns" and not self.dropped:
            response.read()
            self.dropped += 1
            raise httpx.ReadError("connection lost", request=request)
        return response


def test_a_retried_submit_creates_one_turn(served):
    transport = DropFirstAnswer()
    headers = {"Authorization": f"Bearer {TOKENS['alice']}"}
    http = httpx.Client(base_url=served.url, transport=transport, headers=headers, timeout=150)
    with Client(served.url, http=http, retry=Retry(attempts=3, backoff=0.01)) as client:
        submitted = client.submit("only once please", thread_id="chat:once")
        assert transport.dropped == 1
        assert isinstance(submitted, models.Submitted) and submitted.status == "exists"
        turns = client.turns(thread_id="chat:once")
        assert [t.id for t in turns] == [submitted.turn_id]
        # The same key for another request is refused, not mistaken for a retry.
        client.submit("something else", thread_id="chat:once", idempotency_key="key-1")
        with pytest.raises(Conflict) as reused:
            client.submit("another thing", thread_id="chat:once", idempotency_key="key-1")
        assert reused.value.field == "Idempotency-Key"
    http.close()


def test_a_server_that_is_not_there_is_a_transport_error():
    nobody = Client("http://127.0.0.1:9", retry=Retry(attempts=2, backoff=0.01))
    with nobody, pytest.raises(TransportError):
        nobody.health()
