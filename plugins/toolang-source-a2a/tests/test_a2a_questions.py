"""Questions to a person over A2A, with a plain a2a-sdk client against a real
`toolang run`: a turn that calls ``ask_person`` is an ``input-required`` task showing
the question, and the caller's next message on the task is the answer — checked, owner
only, and the turn resumes with it."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from a2a.helpers.proto_helpers import new_text_message
from a2a.types.a2a_pb2 import SendMessageRequest, TaskState
from a2a_kit import Runtime, install_kit
from google.protobuf.json_format import MessageToDict
from test_serving import client_for, rpc, send_body, store_of

from toolang_core import ApprovalKey, ApprovalKeyFile, NewTurnRequest, QuestionBook, TurnFilter
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import SubmitRules

CONFIG = """
[plugins.source-a2a]
listen = "127.0.0.1:{port}"
tokens = { alice = "alice-token", bob = "bob-token" }
"""
ASK = "ask:" + json.dumps({"question": "Which city?", "choices": ["Lisbon", "Porto"]})


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("questions")
    install_kit(root / "site")
    runtime = Runtime(root / "b", root / "site", CONFIG).start()
    yield runtime
    runtime.stop()


def reply(runtime, task_id, text, message_id, token="alice-token"):
    """A raw SendMessage on ``task_id`` (the JSON-RPC answer, errors included)."""
    body = send_body(text, message_id, taskId=task_id)
    return rpc(runtime, body, token=token).json()


def test_input_required_shows_the_question_and_the_next_message_answers_it(served):
    async def scenario():
        _http, pending = client_for(served, "alice-token")
        client = await pending
        async with client:
            asked = new_text_message(ASK, context_id="ctx-q")
            events = [e async for e in client.send_message(SendMessageRequest(message=asked))]
            task = events[-1].task
            assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            status = task.status.message
            assert status.parts[0].text == "Which city? (answer with one of: Lisbon, Porto)"
            details = MessageToDict(status.metadata)["toolang.question"]
            assert details["choices"] == ["Lisbon", "Porto"]

            # bob cannot answer alice's task; a bad answer is refused; both leave it open
            other = reply(served, task.id, "Porto", "m-bob", token="bob-token")
            assert other["error"]["code"] == -32001, other  # TaskNotFound: not bob's
            wrong = reply(served, task.id, "Rome", "m-wrong")
            assert wrong["error"]["code"] == -32602, wrong
            assert "'Rome' is not one of the choices" in wrong["error"]["message"]
            key = ApprovalKeyFile(served.home / ".toolang" / "approval.key")
            (question,) = QuestionBook(store_of(served), key=key).list("open")
            assert question.id == details["id"]

            answer = new_text_message("porto", task_id=task.id, context_id="ctx-q")
            events = [e async for e in client.send_message(SendMessageRequest(message=answer))]
            done = events[-1].task
            assert (done.id, done.status.state) == (task.id, TaskState.TASK_STATE_COMPLETED)
            assert done.artifacts[0].parts[0].text == (
                'remote said: {"ok": true, "output": "Porto"}'
            )
        return task.id

    task_id = asyncio.run(scenario())
    store = store_of(served)
    key = ApprovalKeyFile(served.home / ".toolang" / "approval.key")
    (question,) = QuestionBook(store, key=key).list(None)
    assert (question.status, question.answer, question.answered_by) == (
        "answered",
        "Porto",
        "a2a:alice",
    )
    # the answer went to the waiting turn: no new turn on the thread for it
    turns = store.list_turns(TurnFilter(thread_id="a2a:ctx-q"))
    assert [t.id for t in turns] == [task_id]


def test_a_caller_without_a_token_is_no_person_and_cannot_answer(tmp_path):
    from a2a.utils.errors import InvalidParamsError

    from toolang_source_a2a.questions import ANONYMOUS, answer

    store = SQLiteStore(tmp_path / "toolang.db")
    turn = store.submit(
        NewTurnRequest(source="chat", thread_id="a2a:x", input="go", owner=ANONYMOUS),
        SubmitRules("chat", 1),
        now=time.time(),
    )
    book = QuestionBook(store, key=ApprovalKey.generate())
    question = book.ask(
        turn_id=turn.id, call_id="q1", thread_id="a2a:x", agent="assistant", owner=None, text="?"
    )
    with pytest.raises(InvalidParamsError, match="a caller without a token is not one"):
        answer(store, question, "yes", ANONYMOUS)
    assert book.get(question.id).status == "open"
    store.close()
