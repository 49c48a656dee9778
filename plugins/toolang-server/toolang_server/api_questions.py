"""Questions to a person (the built-in ``ask_person`` tool) over HTTP — owner-checked
and answered exactly as on the CLI, through the same
:class:`~toolang_core.QuestionBook`: an owner sees and answers only the questions of
its own turns, and only a signed-in person answers.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from toolang_core import AnswerRefused, Question, QuestionBook, QuestionError
from toolang_server import models
from toolang_server.api_turns import sees_turn
from toolang_server.auth import require_person
from toolang_server.http import (
    ApiError,
    Caller,
    caller_of,
    ok,
    read_json,
    runtime_of,
    store_of,
)
from toolang_server.openapi import operation
from toolang_server.schema import parse_body, parse_query

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from toolang_core import RegisterRoute, Runtime

QUESTION_STATUSES: Final = ("open", "answered", "expired")
MAX_ANSWER: Final = 20_000


def book_of(runtime: Runtime) -> QuestionBook:
    return QuestionBook(store_of(runtime))


def question_json(question: Question) -> dict[str, Any]:
    """A question as the API and the console show it (text and answer masked)."""
    return question.to_json()


def mine(runtime: Runtime, caller: Caller, question: Question) -> bool:
    """Whether ``caller`` may see (and answer) ``question``: its turn's owner rule."""
    return sees_turn(runtime, caller, question.turn_id)


def _not_found(question_id: str) -> ApiError:
    return ApiError(
        404,
        f"no question with id {question_id!r}",
        field="question_id",
        expected="the id of one of your questions (GET /api/questions)",
    )


def _visible(runtime: Runtime, caller: Caller, question_id: str) -> Question:
    try:
        question = book_of(runtime).get(question_id)
    except QuestionError:
        raise _not_found(question_id) from None
    if not mine(runtime, caller, question):  # another owner's is as unknown as none
        raise _not_found(question_id)
    return question


@operation(query=models.QuestionQuery, responses={200: list[models.Question]}, errors=(400,))
async def list_questions(request: Request) -> Response:
    """Questions the agents asked a person, oldest first (status: open, answered, all).

    ``status`` defaults to ``open`` (``expired`` works too); an owner sees only its own
    turns' questions."""
    runtime, caller = runtime_of(request), caller_of(request)
    status = parse_query(models.QuestionQuery, request.query_params).status or "open"
    found = book_of(runtime).list(None if status == "all" else status)  # type: ignore[arg-type]
    return ok([question_json(q) for q in found if mine(runtime, caller, q)])


@operation(responses={200: models.Question})
async def get_question(request: Request) -> Response:
    """One question."""
    runtime, caller = runtime_of(request), caller_of(request)
    return ok(question_json(_visible(runtime, caller, request.path_params["question_id"])))


def answer_text(value: Any) -> str:
    """The body's ``answer`` as the text a person would type: a string as is, any other
    JSON value (an object for a question with a schema) as its JSON.

    :raises ApiError: 400 when it is missing or too long."""
    if value is None:
        raise ApiError(
            400, "answer is required", field="answer", expected="a string or a JSON value"
        )
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if len(text) > MAX_ANSWER:
        raise ApiError(
            400,
            f"answer is {len(text)} characters long",
            field="answer",
            expected=f"at most {MAX_ANSWER} characters",
        )
    return text


@operation(body=models.AnswerBody, responses={200: models.Question}, errors=(400, 404, 409, 422))
async def answer(request: Request) -> Response:
    """Answer an open question (a signed-in person only): its turn resumes with it.

    The answer becomes the asking tool's result. A bad answer is refused with 422 and
    what was expected; the question stays open. Loopback alone is no person: 401."""
    runtime, caller = runtime_of(request), caller_of(request)
    question_id = request.path_params["question_id"]
    who = require_person(request, caller, "answering a question")
    body = parse_body(
        models.AnswerBody, await read_json(request, request.app.state.settings.max_body_bytes)
    )
    text = answer_text(body.answer)
    _visible(runtime, caller, question_id)
    try:
        answered = book_of(runtime).answer(question_id, text, by=who)
    except AnswerRefused as exc:
        raise ApiError(
            422, str(exc), field="answer", expected="an answer that fits the question"
        ) from None
    except QuestionError as exc:
        raise ApiError(
            409, str(exc), field="question_id", expected="a question that is still open"
        ) from None
    return ok(question_json(answered))


def register(register_route: RegisterRoute) -> None:
    register_route("/api/questions", list_questions)
    register_route("/api/questions/{question_id}", get_question)
    register_route("/api/questions/{question_id}/answer", answer, methods=("POST",))
