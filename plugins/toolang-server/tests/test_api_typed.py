"""Typed answers over the JSON API (a real ``toolang run`` with the server on): the
request's ``output_schema`` asks for one; the answer comes back as a JSON value; a
schema that is not JSON Schema is refused at the door with 422, nothing stored."""

from __future__ import annotations

from server_helpers import ANSWER_WAIT, TOKENS, open_runtime_store

from toolang_core import TurnFilter
from toolang_core.testing.live_server import parse_sse

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def test_a_typed_answer_comes_back_as_a_json_value_everywhere(token_server):
    with token_server.client(TOKENS["alice"]) as alice:
        done = alice.post(
            "/api/turns",
            json={"input": '/json {"city": "Oslo"}', "output_schema": SCHEMA, "wait": ANSWER_WAIT},
        )
        assert done.status_code == 200, done.text
        turn = done.json()
        assert (turn["status"], turn["output"]) == ("completed", {"city": "Oslo"})
        assert turn["meta"]["output_schema"] == SCHEMA
        assert alice.get(f"/api/turns/{turn['id']}").json()["output"] == {"city": "Oslo"}
        listed = alice.get("/api/turns").json()
        assert [t["output"] for t in listed] == [{"city": "Oslo"}]
        kinds = [s["kind"] for s in alice.get(f"/api/turns/{turn['id']}/steps").json()]
        assert kinds.count("output_check") == 1
        # a turn without a schema keeps its text
        plain = alice.post("/api/turns", json={"input": '/json {"a": 1}', "wait": ANSWER_WAIT})
        assert plain.json()["output"] == '{"a": 1}'


def test_a_streamed_typed_answer_finishes_with_the_value(token_server):
    with token_server.client(TOKENS["alice"]) as alice:
        streamed = alice.post(
            "/api/turns",
            json={"input": '/json ["a", "b"]', "output_schema": {"type": "array"}, "stream": True},
            timeout=ANSWER_WAIT,
        )
        events = parse_sse(streamed.text)
        (finished,) = [data for kind, data in events if kind == "finished"]
        assert (finished["status"], finished["output"]) == ("completed", ["a", "b"])


def test_an_answer_never_matching_fails_invalid_output_with_the_errors(token_server):
    with token_server.client(TOKENS["alice"]) as alice:
        done = alice.post(
            "/api/turns",
            json={"input": "no json here", "output_schema": SCHEMA, "wait": ANSWER_WAIT},
        )
        turn = done.json()
        assert (turn["status"], turn["outcome"]) == ("failed", "invalid_output")
        assert "after 3 attempts" in turn["error"]
        assert "attempt 1: the answer is not JSON" in turn["error"]
        steps = alice.get(f"/api/turns/{turn['id']}/steps").json()
        checks = [s for s in steps if s["kind"] == "output_check"]
        assert [c["data"]["attempt"] for c in checks] == [1, 2, 3]


def test_a_schema_that_is_not_json_schema_is_refused_with_422_and_nothing_stored(token_server):
    with token_server.client(TOKENS["alice"]) as alice:
        for bad in ({"type": "strng"}, "not an object", {"properties": 5}):
            refused = alice.post("/api/turns", json={"input": "x", "output_schema": bad})
            assert refused.status_code == 422, refused.text
            error = refused.json()["error"]
            assert error["field"] == "output_schema"
            assert error["message"].startswith("output_schema: ")
    _runtime, store = open_runtime_store(token_server)
    try:
        assert store.list_turns(TurnFilter()) == []
    finally:
        store.close()
