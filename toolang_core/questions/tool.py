"""The built-in ``ask_person`` tool: the model asks a person a question and gets the
answer as the tool's result.

A built-in plugin (registered by every host, status ``builtin``). Calling the tool
records a durable question (:class:`~toolang_core.questions.book.QuestionBook`) and
parks the turn exactly as an approval does: ``awaiting_approval``, its scheduler slot
free for other work, its own time limit standing still. A person answers from the CLI
(``toolang questions answer``), the console, the HTTP API or an A2A reply; the answer,
checked against the question's ``choices`` or ``schema``, is the tool's result and the
turn goes on. A question nobody answers within ``[questions] timeout_seconds`` expires:
the tool fails with "nobody answered" and the model decides what to do.

The tool is declared idempotent: a turn resumed after a crash runs the call again under
the same key, which finds the question it asked (and the answer, if one came while the
runtime was down) — a person is never asked twice, and no other tool call is repeated.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import structlog

from toolang_core.errors import describe_exception
from toolang_core.markers import hookimpl
from toolang_core.questions.answers import check_question
from toolang_core.questions.book import Question, QuestionBook
from toolang_core.tools.types import Tool, ToolCallContext  # the hints make the schema

if TYPE_CHECKING:
    from toolang_core.plugins.registrars import RegisterTool

log = structlog.get_logger("toolang.questions")

TOOL_NAME = "ask_person"


class NobodyAnswered(RuntimeError):
    """The question expired unanswered (its message goes to the model)."""


async def ask_person(
    question: str,
    choices: list[str] | None = None,
    schema: dict[str, Any] | None = None,
    context: ToolCallContext | None = None,
) -> Any:
    """Ask the person you work for a question and wait for their answer. Use it when you
    need a decision, a fact or a preference only they have; do not use it for things you
    can find out yourself.

    :param question: the question, complete in itself (the person may read it hours later)
    :param choices: the answers the person may pick from, if the answer is one of a few
    :param schema: a JSON Schema the answer must match, if you need structured data
    """
    text, picked, shape = check_question(question, choices, schema)
    if context is None or context.turn is None or context.runtime.store is None:
        raise RuntimeError("ask_person works inside an agent turn of a serving runtime only")
    handle, runtime = context.turn, context.runtime
    store = runtime.store
    assert store is not None
    book = QuestionBook(store, clock=runtime.clock)
    asked = book.ask(
        turn_id=context.turn_id,
        call_id=context.call.call_id,
        thread_id=context.thread_id,
        agent=context.agent,
        owner=handle.owner,
        text=runtime.redaction.text(text),  # at rest, as everywhere it is shown
        choices=picked,
        schema=shape,
        timeout_seconds=runtime.config.questions.timeout_seconds,
    )
    log.info("question.asked", turn=context.turn_id, question=asked.id)
    try:
        async with handle.parked():
            final = await book.wait(asked, poll_seconds=runtime.config.runtime.poll_seconds)
    except asyncio.CancelledError:
        _expire_unless_coming_back(book, asked, handle.stopped_for_good())
        raise
    return result_of(final)


def result_of(question: Question) -> Any:
    """What the tool returns for a question no longer open.

    :raises NobodyAnswered: when it expired."""
    if question.status == "answered":
        return question.answer
    why = question.reason or "nobody answered in time"
    raise NobodyAnswered(
        f"the question was not answered ({why}); decide without the answer, or say what you need"
    )


def _expire_unless_coming_back(book: QuestionBook, question: Question, why: str | None) -> None:
    if why is None:  # only handed back: the turn resumes and waits again
        return
    try:
        book.expire(question, reason=why)
    except Exception as exc:  # the sweep after the next heartbeat tries again
        log.warning("question.expire_failed", question=question.id, error=describe_exception(exc))


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    register(Tool.from_function(ask_person, blocking=False, idempotent=True))
