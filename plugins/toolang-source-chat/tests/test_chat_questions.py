"""``toolang chat`` while its turn waits on an ``ask_person`` question: ``chat -i``
shows the question and reads the answer (asking again after a refused one); a plain
``chat`` says how to answer from another terminal."""

from __future__ import annotations

import getpass
import os
import queue
import subprocess
import sys
import threading

import pytest
from chat_helpers import listed, scripted_chat

ASK = {"question": "Which city?", "choices": ["Lisbon", "Porto"]}


@pytest.fixture
def asking(toolang_distribution, toolang_home, tmp_path):
    """The script-file model asking ASK, then answering "all done"; the environment for
    `toolang chat` in a subprocess."""
    return scripted_chat(
        toolang_distribution,
        toolang_home,
        tmp_path,
        name="toolang-test-chat-ask",
        first_call={"id": "q1", "name": "ask_person", "params": ASK},
        plugins=[],
    )


def questions(toolang_home):
    from toolang_core import QuestionBook

    return listed(toolang_home, QuestionBook, None)


def test_interactive_chat_shows_the_question_and_reads_the_answer(
    toolang_cli, toolang_home, asking
):
    result = toolang_cli("chat", "-i", env=asking, input="plan my trip\nRome\nporto\n")
    assert result.returncode == 0, result.stderr
    assert "all done" in result.stdout
    assert "from assistant: Which city?" in result.stderr
    assert "answer with one of: Lisbon, Porto" in result.stderr
    assert "error: 'Rome' is not one of the choices" in result.stderr
    assert result.stdout.count("answer: ") == 2  # asked again after the refusal
    (question,) = questions(toolang_home)
    assert (question.status, question.answer, question.answered_by) == (
        "answered",
        "Porto",
        f"cli:{getpass.getuser()}",
    )


def test_chat_says_how_to_answer_and_takes_the_answer_given_elsewhere(
    toolang_cli, toolang_home, asking
):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(asking)
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolang_core", "chat", "plan my trip"],
        cwd=toolang_home.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    said: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [said.put(line) for line in proc.stderr], daemon=True).start()
    try:
        hint = ""
        while "toolang questions answer" not in hint:
            hint = said.get(timeout=60)
        question_id = hint.split()[3]
        answered = toolang_cli("questions", "answer", question_id, "Lisbon", env=asking)
        assert answered.returncode == 0, answered.stderr
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert "all done" in out
    (question,) = questions(toolang_home)
    assert (question.id, question.answer) == (question_id, "Lisbon")
