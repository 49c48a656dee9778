"""``toolang chat`` while its turn waits on an ``ask_person`` question: the question is
shown, and ``chat -i`` reads the answer from the terminal (recorded as ``cli:<os
user>``, where the operator's credential can be read — the same rule as
``toolang questions answer``); a plain ``chat`` says how to answer from another
terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from pathlib import Path

    from toolang_core import Inbox, Question, QuestionBook
    from toolang_source_chat.terminal import LineReader


async def show(
    inbox: Inbox, turn_id: str, shown: set[str], *, ask: LineReader | None, credential: Path
) -> None:
    """Show the question ``turn_id`` waits on (once), and with ``ask`` read its answer."""
    from toolang_core import QuestionBook

    book = QuestionBook(inbox.store)
    question = book.for_turn(turn_id)
    if question is None or question.id in shown:
        return
    shown.add(question.id)
    click.echo(
        f"question ({question.id}) from {question.agent}: {question.to_json()['text']}", err=True
    )
    if question.choices:
        click.echo(f"  answer with one of: {', '.join(question.choices)}", err=True)
    elif question.schema is not None:
        click.echo("  answer with JSON matching its schema (toolang questions show)", err=True)
    if ask is None:
        _how_to_answer(question)
        return
    await _read_answer(book, question, ask, credential)


def _how_to_answer(question: Question) -> None:
    click.echo(
        f"the turn waits for your answer; give it from another terminal:\n"
        f"  toolang questions answer {question.id} TEXT",
        err=True,
    )


async def _read_answer(
    book: QuestionBook, question: Question, reader: LineReader, credential: Path
) -> None:
    """Ask until an answer fits (a refused one is explained, and asked again)."""
    from toolang_core import AnswerRefused, CredentialError, QuestionError, cli_principal

    while True:
        try:
            reply = await reader.readline("answer: ")
        except EOFError:
            click.echo("", err=True)
            _how_to_answer(question)
            return
        try:
            by = cli_principal(credential, action=f"answer question {question.id}")
            book.answer(question.id, reply, by=by)
        except AnswerRefused as exc:
            click.echo(f"error: {exc}", err=True)
            continue
        except (CredentialError, QuestionError) as exc:  # e.g. answered elsewhere meanwhile
            click.echo(f"error: {exc}", err=True)
            return
        click.echo("answered", err=True)
        return
