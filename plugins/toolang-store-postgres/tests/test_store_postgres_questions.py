"""Questions to a person (``ask_person``) on the PostgreSQL store: the scenarios of the
core's tests/test_questions.py — the answer becomes the tool result, a choice is checked,
a question nobody answers expires, an answer forged in the database without the key is
ignored — with the questions as records of a real PostgreSQL server."""

from __future__ import annotations

import asyncio
import json
import time

import psycopg
import pytest

import toolang_store_postgres
from toolang_core import AnswerRefused, QuestionBook, QuestionError
from toolang_core.store import NewTurnRequest, TurnStatus
from toolang_core.testing.models import text, tool_call


@pytest.fixture
def asking(toolang_runtime, toolang_pg_dsn, toolang_pg_schema, toolang_scripted_model):
    """``asking(script, timeout=86400)``: a runtime on the PostgreSQL store whose
    scripted model follows ``script``; returns ``(runtime, model)``."""

    def make(script, *, timeout: float = 86400.0):
        model = toolang_scripted_model(script)
        runtime = toolang_runtime(
            f'[store]\nbackend = "postgres"\n[plugins.store-postgres]\ndsn = "{toolang_pg_dsn}"\n'
            f'schema = "{toolang_pg_schema}"\n[runtime]\nexecutor = "agent"\npoll_seconds = 0.05\n'
            'shutdown_grace_seconds = 0\n[models]\ndefault = "scripted"\n'
            f"[questions]\ntimeout_seconds = {timeout}\n",
            plugins={"store-postgres": toolang_store_postgres, "scripted": model.plugin()},
        )
        return runtime, model

    return make


def run(runtime, answer=None, *, owner=None, deadline: float = 60.0):
    """Submit a turn, serve; when it waits on a question, ``answer(book, question)`` once."""
    inbox = runtime.open_inbox()

    async def scenario():
        turn_id = inbox.submit(
            NewTurnRequest(source="chat", thread_id="cli:a", input="plan", owner=owner)
        ).id
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        book = QuestionBook(inbox.store)
        answered = False
        try:
            end = time.monotonic() + deadline
            while time.monotonic() < end:
                turn = inbox.get(turn_id)
                if turn.status.is_terminal:
                    return turn
                if turn.status is TurnStatus.AWAITING_APPROVAL and answer and not answered:
                    question = book.for_turn(turn_id)
                    if question is not None:
                        answer(book, question)
                        answered = True
                await asyncio.sleep(0.02)
            raise AssertionError(f"turn still {inbox.get(turn_id).status} after {deadline} s")
        finally:
            stop.set()
            await serving

    try:
        return asyncio.run(scenario()), QuestionBook(inbox.store).list(None)
    finally:
        inbox.store.close()


def result(model, index=1):
    return json.loads(model.calls[index].messages[-1].content)


def test_the_answer_becomes_the_tool_result_and_the_turn_goes_on(asking):
    runtime, model = asking([tool_call("ask_person", {"question": "Which city?"}), text("Booked")])
    turn, (question,) = run(
        runtime, lambda book, q: book.answer(q.id, "Lisbon", by="cli:alice"), owner="alice"
    )
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "Booked")
    assert result(model) == {"ok": True, "output": "Lisbon"}
    assert (question.status, question.answer, question.owner) == ("answered", "Lisbon", "alice")


@pytest.mark.parametrize(
    ("answer", "given"),
    [
        ('{"name": "x", "age": 3}', {"name": "x", "age": 3}),  # jsonb orders keys its way
        ("1e16", 1e16),  # and gives numbers back by value: 10000000000000000
        ('"a\\u0000b"', "a\\x00b"),  # and holds no NUL
    ],
)
def test_an_answer_reads_back_as_it_was_sealed(asking, answer, given):
    """Before, these answers read back as forged (``question.answer_forged``) and the
    turn waited for ever: the seal covered them as Python wrote them."""
    runtime, model = asking(
        [
            tool_call(
                "ask_person",
                {"question": "Who?", "schema": {"type": ["object", "number", "string"]}},
            ),
            text("Booked"),
        ]
    )
    turn, (question,) = run(runtime, lambda book, q: book.answer(q.id, answer, by="cli:alice"))
    assert (turn.status, question.status) == (TurnStatus.COMPLETED, "answered")
    assert result(model) == {"ok": True, "output": given}


def test_a_wrong_choice_is_refused_and_the_question_stays_open(asking):
    runtime, model = asking(
        [tool_call("ask_person", {"question": "Seat?", "choices": ["window", "aisle"]}), text("ok")]
    )
    refused = []

    def answer(book, question):
        with pytest.raises(AnswerRefused, match="'middle' is not one of the choices"):
            book.answer(question.id, "middle", by="cli:alice")
        refused.append(book.get(question.id).status)
        book.answer(question.id, " AISLE ", by="cli:alice")

    turn, _ = run(runtime, answer)
    assert turn.status is TurnStatus.COMPLETED and refused == ["open"]
    assert result(model) == {"ok": True, "output": "aisle"}


def test_a_question_nobody_answers_expires_and_the_model_is_told(asking):
    runtime, model = asking(
        [tool_call("ask_person", {"question": "Which city?"}), text("I chose")], timeout=0.2
    )
    turn, (question,) = run(runtime)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "I chose")
    assert "nobody answered in time" in model.calls[1].messages[-1].content
    assert question.status == "expired"
    store = runtime.open_store()
    try:
        with pytest.raises(QuestionError, match="already expired"):
            QuestionBook(store).answer(question.id, "Paris", by="cli:alice")
    finally:
        store.close()


def test_an_answer_forged_in_the_database_is_ignored(asking, toolang_pg_dsn, toolang_pg_schema):
    runtime, model = asking([tool_call("ask_person", {"question": "Which city?"}), text("ok")])
    forged = []

    def answer(book, question):
        with psycopg.connect(toolang_pg_dsn, autocommit=True) as conn:
            updated = conn.execute(
                f'UPDATE "{toolang_pg_schema}".records SET data = data || '
                """'{"status": "answered", "answer": "Paris", "answered_by": "x"}'::jsonb """
                "WHERE kind = 'toolang.question' AND data->>'id' = %s",
                (question.id,),
            ).rowcount
        forged.append((updated, book.get(question.id).status))
        book.answer(question.id, "Lisbon", by="cli:alice")  # a person still can

    turn, _ = run(runtime, answer)
    assert forged == [(1, "open")]
    assert turn.status is TurnStatus.COMPLETED
    assert result(model) == {"ok": True, "output": "Lisbon"}
