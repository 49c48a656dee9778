"""``toolang questions list | show | answer``, run as the real command in a subprocess
while a runtime waits on the question."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from toolang_core import TOOL_CALL_ENV, NewTurnRequest, QuestionBook, TurnStatus
from toolang_core.testing.models import ScriptedModel, text, tool_call

CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.02
shutdown_grace_seconds = 0.0

[models]
default = "scripted"
"""
ENV = {"TOOLANG_LOAD_PLUGINS": "none"}


@pytest.fixture
def serve_question(toolang_runtime):
    """``serve_question(params, while_open)``: serve a turn whose model asks with
    ``params``; once the question is open, ``while_open(question)`` runs (in a worker
    thread); return the finished turn and the model."""

    def run(params, while_open):
        model = ScriptedModel([tool_call("ask_person", params), text("thanks")])
        runtime = toolang_runtime(CONFIG, plugins={"scripted": model.plugin()})

        async def main():
            inbox = runtime.open_inbox()
            turn_id = inbox.submit(
                NewTurnRequest(source="chat", thread_id="cli:q", input="plan")
            ).id
            stop = asyncio.Event()
            serving = asyncio.create_task(runtime.serve(stop, sources=()))
            book = QuestionBook(inbox.store)
            try:
                deadline = time.monotonic() + 60
                while (question := book.for_turn(turn_id)) is None:
                    assert time.monotonic() < deadline, inbox.get(turn_id)
                    await asyncio.sleep(0.02)
                await asyncio.to_thread(while_open, question)
                while not (turn := inbox.get(turn_id)).status.is_terminal:
                    assert time.monotonic() < deadline, turn
                    await asyncio.sleep(0.02)
                return turn
            finally:
                stop.set()
                await serving
                inbox.store.close()

        return asyncio.run(main()), model

    return run


def test_a_person_lists_and_answers_from_the_cli_and_the_turn_resumes(toolang_cli, serve_question):
    shown = {}

    def answer(question):
        listed = toolang_cli("questions", "list", "--json", env=ENV)
        assert listed.returncode == 0, listed.stderr
        shown["list"] = json.loads(listed.stdout)
        table = toolang_cli("questions", "list", env=ENV)
        shown["table"] = table.stdout
        one = toolang_cli("questions", "show", question.id, env=ENV)
        shown["show"] = one.stdout
        wrong = toolang_cli("questions", "answer", question.id, "Rome", env=ENV)
        shown["wrong"] = (wrong.returncode, wrong.stderr)
        right = toolang_cli("questions", "answer", question.id, "lisbon", env=ENV)
        assert right.returncode == 0, right.stderr
        shown["right"] = right.stdout

    turn, model = serve_question(
        {"question": "Which city?", "choices": ["Lisbon", "Porto"]}, answer
    )
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "thanks")
    ((listed),) = shown["list"]
    assert (listed["text"], listed["choices"], listed["status"]) == (
        "Which city?",
        ["Lisbon", "Porto"],
        "open",
    )
    assert listed["turn_status"] == "awaiting_approval"
    header = shown["table"].splitlines()[0].split()
    assert header == ["ID", "STATUS", "TURN", "AGENT", "OWNER", "ASKED", "QUESTION", "EXPECTS"]
    assert "expects    one of: Lisbon, Porto" in shown["show"]
    code, err = shown["wrong"]
    assert code == 2
    assert "'Rome' is not one of the choices: expected one of 'Lisbon', 'Porto'" in err
    assert shown["right"].startswith(f"answered {listed['id']} for turn {turn.id}")
    assert json.loads(model.calls[1].messages[-1].content) == {"ok": True, "output": "Lisbon"}


def test_a_process_a_tool_started_cannot_answer(toolang_cli, serve_question):
    refused = {}

    def answer(question):
        env = {**ENV, TOOL_CALL_ENV: "turn-1:call-1"}
        result = toolang_cli("questions", "answer", question.id, "yes", env=env)
        refused["result"] = (result.returncode, result.stderr)
        refused["still"] = json.loads(toolang_cli("questions", "list", "--json", env=ENV).stdout)
        assert toolang_cli("questions", "answer", question.id, "yes", env=ENV).returncode == 0

    turn, _model = serve_question({"question": "Go ahead?"}, answer)
    assert turn.status is TurnStatus.COMPLETED
    code, err = refused["result"]
    assert code != 0
    assert "started by tool call turn-1:call-1" in err
    assert [q["status"] for q in refused["still"]] == ["open"]


def test_answering_an_unknown_question_names_the_list_command(toolang_cli, toolang_runtime):
    toolang_runtime(CONFIG).open_store().close()
    result = toolang_cli("questions", "answer", "q-nope", "yes", env=ENV)
    assert result.returncode == 6
    assert "no question 'q-nope' (see `toolang questions list`)" in result.stderr
