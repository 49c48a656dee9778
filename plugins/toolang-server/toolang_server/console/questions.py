"""Console: the questions agents asked a person (``ask_person``), each with a form to
answer it — a pick list for a question with choices, a text box otherwise. The form
posts to the JSON API (``POST /api/questions/{id}/answer``), so the page follows the
API's owner rule and its "only a signed-in person answers" rule. The answered ones are
searched and paged like the other lists (:mod:`toolang_server.console.listing`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from toolang_server.api_questions import book_of, mine, question_json
from toolang_server.console.listing import WINDOW, paged
from toolang_server.console.pages import render
from toolang_server.http import Caller, caller_of, runtime_of

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from toolang_core import RegisterRoute, Runtime


def open_count(runtime: Runtime, caller: Caller) -> int:
    """How many open questions ``caller`` may answer (the navigation's badge)."""
    return sum(1 for q in book_of(runtime).list("open") if mine(runtime, caller, q))


def _answer_text(answer: object) -> str | None:
    """An answer as a search reads it (a JSON answer as its JSON text)."""
    return None if answer is None else answer if isinstance(answer, str) else json.dumps(answer)


async def questions_page(request: Request) -> Response:
    """Console: open questions with a form each, and the answered ones (searched with
    ``q``, paged with ``page``)."""
    runtime, caller = runtime_of(request), caller_of(request)
    every = [question_json(q) for q in book_of(runtime).list(None) if mine(runtime, caller, q)]
    for question in every:
        schema = question.get("schema")
        question["schema_text"] = json.dumps(schema, indent=2) if schema is not None else ""
    waiting = [q for q in every if q["status"] == "open"]
    done, pager = paged(
        request,
        sorted(
            (q for q in every if q["status"] != "open"),
            key=lambda q: q["answered_at"] or q["created_at"],
            reverse=True,
        )[:WINDOW],
        lambda q: (
            q["id"], q["text"], q["status"], _answer_text(q["answer"]), q["answered_by"],
            q["agent"], q["thread_id"], q["turn_id"], q["reason"],
        ),
    )  # fmt: skip
    return render(
        request,
        "questions.html",
        "/questions",
        "Questions",
        waiting=waiting,
        done=done,
        pager=pager,
        refresh=5,
    )


def register(register_route: RegisterRoute) -> None:
    register_route("/questions", questions_page)
