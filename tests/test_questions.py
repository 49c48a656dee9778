"""Questions to a person (the built-in ``ask_person`` tool) through a real runtime: the
turn parks like an approval, a person's answer — checked against choices or a schema —
becomes the tool's result, and a question nobody answers expires."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time

import pytest
from person_helpers import serve_until_decided, submit as submit_turn

from toolang_core.config import ToolangConfig
from toolang_core.config.model import ModelsConfig, QuestionsConfig, RuntimeConfig, ToolsConfig
from toolang_core.questions import AnswerRefused, QuestionBook, QuestionError
from toolang_core.runtime import Runtime
from toolang_core.store.types import TurnStatus
from toolang_core.testing.models import ScriptedModel, text, tool_call
from toolang_core.testing.runtimes import serve_until_parked


def make(tmp_path, model, *, timeout=86400.0, tool_timeout=60.0):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.02, shutdown_grace_seconds=0.0),
        models=ModelsConfig(default="scripted"),
        tools=ToolsConfig(timeout_seconds=tool_timeout),
        questions=QuestionsConfig(timeout_seconds=timeout),
    )
    return Runtime.with_plugins(config, [("scripted", model.plugin())], env={})


def submit(runtime, words="plan my trip", owner=None):
    return submit_turn(runtime, words, owner=owner)


async def serve_until(runtime, turn_id, answer=None, *, deadline=30.0):
    """Serve; when the turn waits on a question, call ``answer(book, question)`` once."""
    return await serve_until_decided(
        runtime, turn_id, QuestionBook, QuestionBook.for_turn, answer, deadline=deadline
    )


def told(model, index=1):
    """The tool message the model saw in its call number ``index``."""
    return model.calls[index].messages[-1].content


def result(model, index=1):
    """The tool result the model saw in its call number ``index``, decoded."""
    return json.loads(told(model, index))


def test_the_answer_becomes_the_tool_result_and_the_turn_goes_on(tmp_path):
    model = ScriptedModel(
        [tool_call("ask_person", {"question": "Which city?"}), text("Booked for you")]
    )
    runtime = make(tmp_path, model)
    turn_id = submit(runtime, owner="alice")
    seen = []

    def answer(book, question):
        seen.append((question.text, question.status, question.owner))
        book.answer(question.id, "Lisbon", by="cli:alice")

    turn = asyncio.run(serve_until(runtime, turn_id, answer))
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "Booked for you")
    assert seen == [("Which city?", "open", "alice")]
    assert result(model) == {"ok": True, "output": "Lisbon"}
    assert len(model.calls) == 2
    store = runtime.open_store()
    try:
        (question,) = QuestionBook(store).list(None)
        assert (question.status, question.answer, question.answered_by) == (
            "answered",
            "Lisbon",
            "cli:alice",
        )
    finally:
        store.close()


def test_a_choice_is_matched_ignoring_case_and_a_wrong_one_is_refused(tmp_path):
    model = ScriptedModel(
        [
            tool_call(
                "ask_person", {"question": "Window or aisle?", "choices": ["window", "aisle"]}
            ),
            text("ok"),
        ]
    )
    runtime = make(tmp_path, model)
    turn_id = submit(runtime)
    refused = []

    def answer(book, question):
        with pytest.raises(AnswerRefused, match=r"'middle' is not one of the choices.*'window'"):
            book.answer(question.id, "middle", by="cli:alice")
        refused.append(book.get(question.id).status)  # still open after the refusal
        book.answer(question.id, " AISLE ", by="cli:alice")

    turn = asyncio.run(serve_until(runtime, turn_id, answer))
    assert turn.status is TurnStatus.COMPLETED
    assert refused == ["open"]
    assert result(model) == {"ok": True, "output": "aisle"}


def test_a_schema_answer_is_parsed_as_json_and_checked(tmp_path):
    schema = {
        "type": "object",
        "properties": {"nights": {"type": "integer", "minimum": 1}},
        "required": ["nights"],
    }
    model = ScriptedModel(
        [tool_call("ask_person", {"question": "How long?", "schema": schema}), text("ok")]
    )
    runtime = make(tmp_path, model)
    turn_id = submit(runtime)

    def answer(book, question):
        with pytest.raises(AnswerRefused, match="does not match the question's schema"):
            book.answer(question.id, '{"nights": 0}', by="cli:alice")
        with pytest.raises(AnswerRefused, match="does not match"):
            book.answer(question.id, "three nights", by="cli:alice")
        # JSON's reader takes these; no store can keep them: text, which the schema refuses
        for not_json in ('{"nights": NaN}', '{"nights": Infinity}', '{"nights": 1e400}'):
            with pytest.raises(AnswerRefused, match="does not match"):
                book.answer(question.id, not_json, by="cli:alice")
        book.answer(question.id, '{"nights": 3}', by="cli:alice")

    turn = asyncio.run(serve_until(runtime, turn_id, answer))
    assert turn.status is TurnStatus.COMPLETED
    assert result(model) == {"ok": True, "output": {"nights": 3}}


def test_an_answer_is_checked_as_it_is_stored_with_a_nul_written_out(tmp_path):
    """A NUL is kept as the four characters ``\\x00``: ``"ab\\x00"`` is six long, and
    a five-character limit refuses it (it passed, and six were stored)."""
    schema = {"type": "object", "properties": {"code": {"type": "string", "maxLength": 5}}}
    model = ScriptedModel(
        [tool_call("ask_person", {"question": "Code?", "schema": schema}), text("ok")]
    )
    runtime = make(tmp_path, model)
    turn_id = submit(runtime)

    def answer(book, question):
        with pytest.raises(AnswerRefused, match="does not match the question's schema"):
            book.answer(question.id, '{"code": "ab\\u0000"}', by="cli:alice")
        book.answer(question.id, '{"code": "a\\u0000"}', by="cli:alice")

    turn = asyncio.run(serve_until(runtime, turn_id, answer))
    assert turn.status is TurnStatus.COMPLETED
    assert result(model) == {"ok": True, "output": {"code": "a\\x00"}}


def test_a_text_answer_is_measured_as_it_is_stored(tmp_path):
    from toolang_core.questions.answers import MAX_ANSWER, check_answer

    assert check_answer("ab\x00", None, None) == "ab\\x00"
    with pytest.raises(AnswerRefused, match=f"1 to {MAX_ANSWER} characters"):
        check_answer("\x00" * (MAX_ANSWER // 4 + 1), None, None)


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        ({"question": "?", "schema": {"type": "no-such-type"}}, "not a valid JSON Schema"),
        ({"question": "?", "choices": []}, "choices must be 1 to"),
        ({"question": "?", "choices": ["a", "A"]}, "choices must differ"),
        ({"question": "  "}, "question must be 1 to"),
        ({"question": "?", "choices": ["a"], "schema": {}}, "not both"),
    ],
)
def test_a_bad_question_fails_the_call_without_asking_anyone(tmp_path, params, problem):
    model = ScriptedModel([tool_call("ask_person", params), text("fixed")])
    runtime = make(tmp_path, model)
    turn = asyncio.run(serve_until(runtime, submit(runtime)))
    assert turn.status is TurnStatus.COMPLETED
    assert problem in told(model)
    store = runtime.open_store()
    try:
        assert QuestionBook(store).list(None) == []
    finally:
        store.close()


def test_a_question_nobody_answers_expires_and_the_model_is_told(tmp_path):
    model = ScriptedModel(
        [tool_call("ask_person", {"question": "Which city?"}), text("I chose for you")]
    )
    runtime = make(tmp_path, model, timeout=0.2)
    turn = asyncio.run(serve_until(runtime, submit(runtime)))
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "I chose for you")
    assert "the question was not answered (nobody answered in time)" in told(model)
    store = runtime.open_store()
    try:
        (question,) = QuestionBook(store).list(None)
        assert question.status == "expired"
        with pytest.raises(QuestionError, match="already expired"):
            QuestionBook(store).answer(question.id, "Paris", by="cli:alice")
    finally:
        store.close()


def test_waiting_for_a_person_does_not_count_against_the_tool_time_limit(tmp_path):
    model = ScriptedModel([tool_call("ask_person", {"question": "Which city?"}), text("ok")])
    runtime = make(tmp_path, model, tool_timeout=0.3)
    turn_id = submit(runtime)

    async def run():
        inbox = runtime.open_inbox()
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        book = QuestionBook(inbox.store)
        try:
            end = time.monotonic() + 30
            while book.for_turn(turn_id) is None and time.monotonic() < end:
                await asyncio.sleep(0.02)
            question = book.for_turn(turn_id)
            asked = time.monotonic()
            while time.monotonic() - asked < 0.9:  # three times the tool's limit
                await asyncio.sleep(0.05)
                assert inbox.get(turn_id).status is TurnStatus.AWAITING_APPROVAL
            book.answer(question.id, "Oslo", by="cli:alice")
            while not inbox.get(turn_id).status.is_terminal and time.monotonic() < end:
                await asyncio.sleep(0.02)
            return inbox.get(turn_id)
        finally:
            stop.set()
            await serving
            inbox.store.close()

    turn = asyncio.run(run())
    assert turn.status is TurnStatus.COMPLETED
    assert result(model) == {"ok": True, "output": "Oslo"}


def test_an_answer_from_a_process_a_tool_started_is_refused_and_changes_nothing(
    tmp_path, monkeypatch
):
    from toolang_core import TOOL_CALL_ENV
    from toolang_core.tools.approvals import DecisionFromTool

    runtime = make(tmp_path, ScriptedModel([]))
    store = runtime.open_store()
    book = QuestionBook(store)
    asked = book.ask(
        turn_id=submit(runtime),
        call_id="c1",
        thread_id="cli:a",
        agent="assistant",
        owner=None,
        text="Which city?",
    )
    monkeypatch.setenv(TOOL_CALL_ENV, "t-1:c-1")
    with pytest.raises(DecisionFromTool, match=r"started by tool call t-1:c-1"):
        book.answer(asked.id, "Paris", by="agent")
    assert book.get(asked.id).status == "open"
    monkeypatch.delenv(TOOL_CALL_ENV)
    assert book.answer(asked.id, "Paris", by="cli:alice").status == "answered"
    store.close()


def test_an_answer_written_into_the_store_without_the_key_is_ignored(tmp_path):
    runtime = make(tmp_path, ScriptedModel([]))
    store = runtime.open_store()
    book = QuestionBook(store)
    asked = book.ask(
        turn_id=submit(runtime),
        call_id="c1",
        thread_id="cli:a",
        agent="assistant",
        owner=None,
        text="Which city?",
    )
    record = store.get_record("toolang.question", asked.key)
    forged = {**record.data, "status": "answered", "answer": "Paris", "answered_by": "x"}
    store.put_record("toolang.question", asked.key, forged, now=time.time())
    assert book.get(asked.id).status == "open"
    store.close()


def test_a_question_changed_after_it_was_asked_cannot_be_answered(tmp_path):
    """A process with the store but not the key rewrote an open question (its text,
    its choices): the person answered what they were shown, and the turn took it as
    the answer to its own question. Now it reads as expired, and nobody answers it."""
    runtime = make(tmp_path, ScriptedModel([]))
    store = runtime.open_store()
    asked = QuestionBook(store).ask(
        turn_id=submit(runtime),
        call_id="c1",
        thread_id="cli:a",
        agent="assistant",
        owner=None,
        text="Delete the old backups?",
        choices=("yes", "no"),
    )
    record = store.get_record("toolang.question", asked.key)
    for change in ({"text": "Keep the old backups?"}, {"choices": ["no", "yes", "maybe"]}):
        store.put_record("toolang.question", asked.key, {**record.data, **change}, now=time.time())
        book = QuestionBook(store)
        assert book.list("open") == []
        assert (book.get(asked.id).status, book.for_turn(asked.turn_id)) == ("expired", None)
        with pytest.raises(QuestionError, match="already expired"):
            book.answer(asked.id, "yes", by="cli:alice")
    store.put_record("toolang.question", asked.key, dict(record.data), now=time.time())
    assert QuestionBook(store).get(asked.id).status == "open"  # as asked: it checks
    store.close()


def test_another_questions_answer_copied_into_a_calls_place_is_no_answer(tmp_path):
    """An answered question of another turn (another owner) copied into this call's
    place: the wait followed the copy to the original and returned its answer. Nobody
    answered this call's question."""
    runtime = make(tmp_path, ScriptedModel([]))
    store = runtime.open_store()
    book = QuestionBook(store)
    ask = {"thread_id": "cli:a", "agent": "assistant", "choices": ("yes", "no")}
    other = book.ask(turn_id=submit(runtime), call_id="c1", owner="mallory", text="2+2=4?", **ask)
    book.answer(other.id, "yes", by="cli:mallory")
    turn_id = submit(runtime)
    whole = store.get_record("toolang.question", other.key)
    store.put_record("toolang.question", f"{turn_id}:q1", dict(whole.data), now=time.time())
    asked = book.ask(turn_id=turn_id, call_id="q1", owner="alice", text="Wire $10k?", **ask)
    final = asyncio.run(asyncio.wait_for(book.wait(asked, poll_seconds=0.01), 5))
    assert (final.status, final.answer) == ("expired", None)
    assert book.get(other.id).status == "answered"  # the original, untouched
    store.close()


def test_a_question_changed_in_the_store_while_its_turn_was_away_gets_no_answer(tmp_path):
    """The turn parked on a question is handed back; its stored model answer, which the
    call is replayed from, is rewritten to ask something else. The person's answer to
    the question they were shown is no answer to the other one."""
    shown = {"question": "Delete the STAGING database?", "choices": ["yes", "no"]}
    model = ScriptedModel([tool_call("ask_person", shown, call_id="q1"), text("ok")])
    runtime = make(tmp_path, model)
    turn_id = submit(runtime)

    serve_until_parked(runtime, turn_id)
    store = runtime.open_store()
    with sqlite3.connect(str(store.location)) as db:  # no key needed for this
        changed = db.execute(
            "UPDATE turn_steps SET data = replace(data, 'STAGING', 'PRODUCTION') "
            "WHERE turn_id = ? AND kind = 'model_call'",
            (turn_id,),
        ).rowcount
    assert changed == 1
    book = QuestionBook(store)
    (question,) = book.list("open")
    assert "STAGING" in question.text  # what the person is shown
    book.answer(question.id, "yes", by="cli:alice")
    store.close()
    turn = asyncio.run(serve_until(runtime, turn_id))
    assert turn.status is TurnStatus.COMPLETED
    sent = result(model)
    assert sent["ok"] is False and "not answered" in sent["error"], sent


def test_a_secret_in_the_question_is_masked_at_rest(tmp_path):
    question = "Shall I use the key sk-abcdefghijklmnop1234 for this?"
    model = ScriptedModel([tool_call("ask_person", {"question": question}), text("ok")])
    runtime = make(tmp_path, model)
    shown = []

    def answer(book, asked):
        shown.append(asked.text)
        book.answer(asked.id, "yes", by="cli:alice")

    turn = asyncio.run(serve_until(runtime, submit(runtime), answer))
    assert turn.status is TurnStatus.COMPLETED
    assert shown == ["Shall I use the key ******** for this?"]
    stored = b"".join(p.read_bytes() for p in (tmp_path / ".toolang").glob("toolang.db*"))
    assert b"sk-abcdefghijklmnop1234" not in stored
