"""Questions to a person (``ask_person``) over A2A: a turn waiting on one is the task's
``input-required`` state with the question as its status message, and the caller's next
message on that task is the answer.

The caller is the turn's owner (``StoreRequestHandler`` checked that) and arrived with a
token mapped to it; the anonymous loopback caller (no tokens configured) is no person
and cannot answer — the same rule as the HTTP API's. The answer is checked like any
other (choices, schema); a bad one is refused with what was expected and the question
stays open.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Final

from a2a.utils.errors import InvalidParamsError

from toolang_core import AnswerRefused, Question, QuestionBook, QuestionError, TurnStatus

if TYPE_CHECKING:
    from a2a.types.a2a_pb2 import Task

    from toolang_core import ExecutionStore, TurnRequest

ANONYMOUS: Final = "a2a:local"
"""The owner of an A2A caller without a token (see ``routes.ANONYMOUS``)."""


def open_question(store: ExecutionStore, turn: TurnRequest) -> Question | None:
    """The question ``turn`` waits on, if it waits on one."""
    if turn.status is not TurnStatus.AWAITING_APPROVAL:
        return None
    return QuestionBook(store).for_turn(turn.id)


def asking(question: Question) -> str:
    """The input-required status text: the question and what answer it expects."""
    if question.choices:
        return f"{question.text} (answer with one of: {', '.join(question.choices)})"
    if question.schema is not None:
        return f"{question.text} (answer with JSON matching the schema in this message's metadata)"
    return question.text


def answer(store: ExecutionStore, question: Question, text: str, caller: str) -> Question:
    """Record ``text`` as ``caller``'s answer to ``question``.

    :raises InvalidParamsError: the caller is no person (anonymous), the answer does not
        fit, or the question is no longer open — nothing was recorded."""
    if caller == ANONYMOUS:
        raise InvalidParamsError(
            message=(
                f"task {question.turn_id!r} waits for a person's answer, and a caller "
                "without a token is not one: configure [plugins.source-a2a] tokens and "
                "answer with yours"
            )
        )
    by = caller if caller.startswith("a2a:") else f"a2a:{caller}"
    try:
        return QuestionBook(store).answer(question.id, text, by=by)
    except (AnswerRefused, QuestionError) as exc:
        raise InvalidParamsError(message=f"answer not accepted: {exc}") from None


async def moved_on(
    store: ExecutionStore, answered: Question, *, poll_seconds: float, timeout: float
) -> None:
    """Wait until the turn took the answer: it no longer waits on ``answered`` (it runs,
    finished, or waits on a new question); or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        turn = store.get(answered.turn_id)
        if turn is None or turn.status is not TurnStatus.AWAITING_APPROVAL:
            return
        waiting = QuestionBook(store).for_turn(turn.id)
        if waiting is not None and waiting.id != answered.id:
            return
        await asyncio.sleep(poll_seconds)


QUESTION_KEY: Final = "toolang.question"
"""Metadata key of an input-required status message: the question's id, and its
choices or schema when it has them."""


def describe(task: Task, question: Question) -> None:
    """Put the question's id, choices and schema in ``task``'s status message metadata,
    for a caller that answers programmatically."""
    details: dict[str, Any] = {"id": question.id}
    if question.choices:
        details["choices"] = list(question.choices)
    if question.schema is not None:
        details["schema"] = question.schema
    task.status.message.metadata.update({QUESTION_KEY: details})
