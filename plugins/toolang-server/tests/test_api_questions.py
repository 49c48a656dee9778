"""Questions to a person (``ask_person``) over HTTP and in the console, against a real
``toolang run`` with the server on: only the turn's owner sees and answers its
questions, only a signed-in person answers, a bad answer is refused and the question
stays open, a good one resumes the turn."""

from __future__ import annotations

import json

from server_helpers import TOKENS, open_runtime_store, wait_for

from toolang_core import QuestionBook


def ask(client, params):
    """Start a turn whose model calls ask_person with ``params``; its id."""
    words = f"/tool ask_person {json.dumps(params)}"
    return client.post("/api/turns", json={"input": words}).json()["turn_id"]


def test_the_owner_answers_over_http_and_the_turn_resumes_with_the_answer(token_server):
    with token_server.client(TOKENS["alice"]) as alice, token_server.client(TOKENS["bob"]) as bob:
        turn_id = ask(alice, {"question": "Which city?", "choices": ["Lisbon", "Porto"]})
        (question,) = wait_for(lambda: alice.get("/api/questions").json())
        assert (question["turn_id"], question["text"], question["choices"]) == (
            turn_id,
            "Which city?",
            ["Lisbon", "Porto"],
        )
        assert alice.get(f"/api/turns/{turn_id}").json()["status"] == "awaiting_approval"
        # bob sees nothing of alice's turn, and cannot answer for her
        assert bob.get("/api/questions").json() == []
        assert bob.get(f"/api/questions/{question['id']}").status_code == 404
        stolen = bob.post(f"/api/questions/{question['id']}/answer", json={"answer": "Porto"})
        assert stolen.status_code == 404
        # a bad answer is refused with what was expected; the question stays open
        wrong = alice.post(f"/api/questions/{question['id']}/answer", json={"answer": "Rome"})
        assert wrong.status_code == 422
        assert "expected one of 'Lisbon', 'Porto'" in wrong.json()["error"]["message"]
        assert alice.get(f"/api/questions/{question['id']}").json()["status"] == "open"
        answered = alice.post(
            f"/api/questions/{question['id']}/answer", json={"answer": "lisbon"}
        ).json()
        assert (answered["status"], answered["answer"], answered["answered_by"]) == (
            "answered",
            "Lisbon",
            "token:alice",
        )
        again = alice.post(f"/api/questions/{question['id']}/answer", json={"answer": "Porto"})
        assert again.status_code == 409 and again.json()["error"]["field"] == "question_id"
        turn = wait_for(
            lambda: (t := alice.get(f"/api/turns/{turn_id}").json())["status"] == "completed" and t
        )
        assert '"output": "Lisbon"' in turn["output"]
        assert [q["status"] for q in alice.get("/api/questions?status=all").json()] == ["answered"]
    _runtime, store = open_runtime_store(token_server)
    try:
        (stored,) = QuestionBook(store).list(None)
        assert stored.answered_by == "token:alice"
    finally:
        store.close()


def test_a_schema_question_takes_a_json_answer(token_server):
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    with token_server.client(TOKENS["alice"]) as alice:
        turn_id = ask(alice, {"question": "How many?", "schema": schema})
        (question,) = wait_for(lambda: alice.get("/api/questions").json())
        url = f"/api/questions/{question['id']}/answer"
        refused = alice.post(url, json={"answer": {"n": "three"}})
        assert refused.status_code == 422
        assert "does not match the question's schema" in refused.json()["error"]["message"]
        assert alice.post(url, json={}).status_code == 400
        assert alice.post(url, json={"answer": {"n": 3}}).json()["answer"] == {"n": 3}
        turn = wait_for(
            lambda: (t := alice.get(f"/api/turns/{turn_id}").json())["status"] == "completed" and t
        )
        assert '"output": {"n": 3}' in turn["output"]


def test_loopback_alone_is_no_person_and_cannot_answer(open_server):
    with open_server.client() as local:
        turn_id = ask(local, {"question": "Go?"})
        (question,) = wait_for(lambda: local.get("/api/questions").json())
        refused = local.post(f"/api/questions/{question['id']}/answer", json={"answer": "yes"})
        assert refused.status_code == 401
        assert local.get(f"/api/questions/{question['id']}").json()["status"] == "open"
        assert local.get(f"/api/turns/{turn_id}").json()["status"] == "awaiting_approval"
        local.post(f"/api/turns/{turn_id}/cancel")


def test_the_console_shows_each_open_question_with_a_form_to_answer_it(token_server):
    with token_server.client(TOKENS["alice"]) as alice, token_server.client(TOKENS["bob"]) as bob:
        ask(alice, {"question": "Window or aisle?", "choices": ["window", "aisle"]})
        (question,) = wait_for(lambda: alice.get("/api/questions").json())
        page = alice.get("/questions").text
        assert "Window or aisle?" in page
        assert f'data-answer="/api/questions/{question["id"]}/answer"' in page
        assert '<option value="aisle">aisle</option>' in page
        assert 'Questions <span class="badge pending">1</span></a>' in page
        assert "Window or aisle?" not in bob.get("/questions").text
