"""``toolang questions list | show | answer``: questions the agents asked a person
(the built-in ``ask_person`` tool), from any process.

Every command works against the configured execution store, so a person answers from
another terminal while ``toolang run`` (or a ``toolang chat``) waits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from toolang_core.cli.state import CliState, pass_state

if TYPE_CHECKING:
    from toolang_core.questions.book import Question, QuestionBook
    from toolang_core.store.protocol import ExecutionStore


def _book(store: ExecutionStore) -> QuestionBook:
    from toolang_core.questions.book import QuestionBook

    return QuestionBook(store)


def _turn_status(store: ExecutionStore, turn_id: str) -> str:
    turn = store.get(turn_id)
    return turn.status.value if turn is not None else "gone"


def question_json(question: Question, turn_status: str) -> dict[str, Any]:
    data = question.to_json()
    data["turn_status"] = turn_status
    return data


def _expects(question: Question) -> str:
    import json

    if question.choices:
        return "one of: " + ", ".join(question.choices)
    if question.schema is not None:
        return "JSON matching " + json.dumps(question.schema, ensure_ascii=False)
    return "any text"


@click.group()
def questions() -> None:
    """Questions the agents asked a person (ask_person), and their answers."""


@questions.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include answered and expired questions.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@pass_state
def list_(state: CliState, *, show_all: bool, as_json: bool) -> None:
    """List questions (open ones unless --all), oldest first."""
    from toolang_core.cli.output import ago, echo_json, short, table
    from toolang_core.store.errors import StoreMissing

    try:
        store = state.open_store(read_only=True)
    except StoreMissing as exc:
        if as_json:
            echo_json([])
        else:
            click.echo(f"no questions ({exc})", err=True)
        return
    try:
        found = _book(store).list(None if show_all else "open")
        rows = [(q, _turn_status(store, q.turn_id)) for q in found]
    finally:
        store.close()
    if as_json:
        echo_json([question_json(q, status) for q, status in rows])
        return
    if not rows:
        click.echo(f"no {'questions' if show_all else 'open questions'}", err=True)
        return
    table(
        [
            (
                q.id,
                q.status if q.answered_by is None else f"{q.status} by {q.answered_by}",
                f"{q.turn_id} ({status})",
                q.agent,
                q.owner or "-",
                ago(q.created_at),
                short(q.to_json()["text"], 50),
                short(_expects(q), 30),
            )
            for q, status in rows
        ],
        ["ID", "STATUS", "TURN", "AGENT", "OWNER", "ASKED", "QUESTION", "EXPECTS"],
    )


@questions.command("show")
@click.argument("question_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_state
def show(state: CliState, *, question_id: str, as_json: bool) -> None:
    """Show one question, what answer it expects, and its answer if it has one."""
    import json

    from toolang_core.cli.output import echo_json, when

    store = state.open_store(read_only=True)
    try:
        question = _book(store).get(question_id)
        status = _turn_status(store, question.turn_id)
    finally:
        store.close()
    data = question_json(question, status)
    if as_json:
        echo_json(data)
        return
    if question.status == "answered":
        answer = f"answered by {question.answered_by} at {when(question.answered_at)}: "
        answer += json.dumps(data["answer"], ensure_ascii=False)
    elif question.status == "expired":
        answer = f"expired at {when(question.answered_at)} ({question.reason})"
    else:
        answer = "open"
    click.echo(
        f"id         {question.id}\nturn       {question.turn_id} ({status})\n"
        f"thread     {question.thread_id}\nagent      {question.agent}\n"
        f"owner      {question.owner or '-'}\nasked      {when(question.created_at)}\n"
        f"expires    {when(question.expires_at) if question.expires_at else 'never'}\n"
        f"expects    {_expects(question)}\nstatus     {answer}\n\n{data['text']}"
    )


@questions.command("answer")
@click.argument("question_id", metavar="ID")
@click.argument("words", nargs=-1, required=True, metavar="TEXT...")
@pass_state
def answer(state: CliState, *, question_id: str, words: tuple[str, ...]) -> None:
    """Answer question ID with TEXT: it becomes the asking tool's result and the turn
    resumes. For a question with choices TEXT is one of them; with a schema, JSON
    matching it. A bad answer is refused and the question stays open."""
    from toolang_core.credential import cli_principal

    text = " ".join(words)
    state.open_store(read_only=True).close()  # no store yet: say so first
    by = cli_principal(state.config.credential_path, action=f"answer question {question_id}")
    store = state.open_store(read_only=False)
    try:
        answered = _book(store).answer(question_id, text, by=by)
    finally:
        store.close()
    click.echo(f"answered {answered.id} for turn {answered.turn_id}")
