"""``toolang chat``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolang_core.cli import CliState, pass_state

if TYPE_CHECKING:
    from toolang_core import (
        Approval,
        ApprovalBook,
        AttachmentRef,
        Inbox,
        RedactionPolicy,
        TurnRequest,
    )
    from toolang_source_chat.terminal import LineReader


def thread_id(name: str) -> str:
    return name if ":" in name else f"cli:{name}"


@click.command()
@click.argument("message", required=False)
@click.option(
    "--thread",
    "thread_name",
    default=None,
    help="Thread name (cli:NAME), or a full thread id. Default: cli:default.",
)
@click.option("--agent", default=None, help="The agent to talk to.")
@click.option("--no-wait", is_flag=True, help="Submit, print the request id and return.")
@click.option("-i", "--interactive", is_flag=True, help="An interactive session on one thread.")
@click.option(
    "-a",
    "--attach",
    "attach",
    multiple=True,
    metavar="PATH|URL",
    help="Attach a file (repeatable): an image, audio, PDF or text the agent's model "
    "takes. A URL is fetched only with [attachments] fetch_urls = true.",
)
@click.option(
    "--owner",
    envvar="TOOLANG_OWNER",
    default=None,
    help="Whose conversation (default: $TOOLANG_OWNER, else none: the operator's).",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Each turn's token limit (lower than [limits] max_tokens_per_turn only).",
)
@click.option(
    "--max-model-calls",
    type=click.IntRange(min=1),
    default=None,
    help="Each turn's model-call limit (lower than [limits] max_model_calls only).",
)
@click.option(
    "--schema",
    "schema_file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Ask for a typed answer: JSON matching the JSON Schema in this file.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result as JSON (a typed answer as its JSON value, not a string).",
)
@pass_state
def chat(
    state: CliState,
    *,
    message: str | None,
    thread_name: str | None,
    agent: str | None,
    no_wait: bool,
    interactive: bool,
    attach: tuple[str, ...],
    owner: str | None,
    max_tokens: int | None,
    max_model_calls: int | None,
    schema_file: Path | None,
    as_json: bool,
) -> None:
    """Send MESSAGE to an agent and print its answer."""
    from toolang_core import UsageError

    asked = {"max_tokens_per_turn": max_tokens, "max_model_calls": max_model_calls}
    limits = {key: value for key, value in asked.items() if value is not None}

    settings = state.runtime.settings.get("source-chat")
    thread = thread_id(thread_name or str(getattr(settings, "default_thread", "default")))
    wait = float(getattr(settings, "wait_seconds", 300.0))
    meta = _schema_meta(schema_file)
    if limits:
        meta["limits"] = limits
    if interactive:
        if as_json:
            raise UsageError("--json prints one answer: it does not go with -i")
        asyncio.run(
            _interactive(state, thread, agent, wait, owner or None, meta=meta, attach=attach)
        )
        return
    if not message:
        raise UsageError("give a MESSAGE, or use -i for an interactive session")
    asyncio.run(
        _once(
            state,
            thread,
            agent,
            message,
            no_wait=no_wait,
            wait=wait,
            owner=owner or None,
            meta=meta,
            as_json=as_json,
            attach=attach,
        )
    )


def _schema_meta(path: Path | None) -> dict[str, Any]:
    """The request metadata asking for a typed answer (none without ``--schema``).

    :raises UsageError: naming ``--schema`` and the file when it cannot be used."""
    if path is None:
        return {}
    from toolang_core import OUTPUT_SCHEMA, SchemaError, UsageError, read_schema_file

    try:
        return {OUTPUT_SCHEMA: read_schema_file(path, where="--schema")}
    except SchemaError as exc:
        raise UsageError(str(exc)) from None


# A request's meta carries the submitting chat's reference: under ``coalesce`` a newer
# message replaces a queued request's input *and* meta, so a reference that is no longer
# ours means our message was replaced (the input itself is not compared: it may be
# stored masked).
SENDER_REF = "chat_ref"


def _submit(
    state: CliState,
    thread: str,
    agent: str | None,
    message: str,
    owner: str | None,
    *,
    meta: dict[str, Any] | None = None,
    attach: tuple[str, ...] = (),
    attached: tuple[AttachmentRef, ...] = (),
    inbox: Inbox | None = None,
) -> tuple[str, str]:
    """Submit ``message`` with ``meta`` (a typed answer's schema, the turn's own spend
    ``limits``: docs/typed-answers.md, docs/spend-limits.md), the files of ``attach``
    and the attachments already kept, ``attached``; return the request id and this
    submission's reference. Through ``inbox`` when given (the caller closes it), else
    over a connection of its own.

    :raises AttachmentError: for an attachment refused (nothing is submitted)."""
    from toolang_core import NewTurnRequest, new_id, with_attachments
    from toolang_source_chat import attach as attachments

    ref = new_id()
    own = inbox is None
    if inbox is None:
        inbox = state.open_inbox()
    try:
        sent: dict[str, Any] = {**(meta or {}), SENDER_REF: ref}
        taken = attached
        if attach:
            taken += attachments.take(state, inbox.store, attach, agent=agent, owner=owner)
        if taken:
            sent = with_attachments(sent, taken)
        turn_id = inbox.submit(
            NewTurnRequest(
                source="chat",
                thread_id=thread,
                input=message,
                agent=agent,
                channel="cli",
                sender="owner",
                owner=owner,
                meta=sent,
            )
        ).id
    finally:
        if own:
            inbox.store.close()
    return turn_id, ref


async def _answer(
    state: CliState,
    turn_id: str,
    wait: float,
    *,
    ask: LineReader | None = None,
    ref: str | None = None,
    as_json: bool = False,
    inbox: Inbox | None = None,
) -> int:
    """Wait for the answer and print it; return the exit code. Reads through ``inbox``
    when given (the caller closes it), else over a connection of its own.

    While the turn awaits approval, show each request: with ``ask`` (the session's
    reader, ``toolang chat -i``) prompt for the decision, otherwise say how to decide
    from another terminal. A request steered into a running turn (strategy ``steer``)
    is answered by that turn: its answer is shown. A request whose message a newer one
    replaced before it ran (strategy ``coalesce``; ``ref`` is this submission's
    reference) is not answered: the sender is told so (exit 5) instead of being shown
    the answer to someone else's text.
    """
    from toolang_core import TurnStatus, TurnStreams

    own = inbox is None
    if inbox is None:
        inbox = state.open_inbox()
    # When this process runs the turn itself (no runtime serves the store), its answer
    # streams here and is printed as it comes.
    watch = TurnStreams.of(state.runtime).watch(turn_id)
    # A message a newer one replaced (coalesce) must not stream the other's answer here.
    printer = _StreamPrinter(
        watch.queue,
        still_ours=lambda: ref is None or not _replaced(inbox.get(turn_id), ref),
        echo=not as_json,
    )
    printing = asyncio.ensure_future(printer.run())
    try:
        _say_what_is_ahead(inbox, inbox.get(turn_id))
        turn = await _wait(state, inbox, turn_id, wait, ask, ours=True)
        if turn is None:
            return 130
        if turn.status is TurnStatus.STEERED:
            target = _steered_into(inbox, turn)
            if target is not None:
                click.echo(f"(delivered into the running turn {target}; its answer:)", err=True)
                turn = await _wait(state, inbox, target, wait, ask, ours=False)
                if turn is None:
                    return 130
        elif ref is not None and _replaced(turn, ref):
            click.echo(
                f"your message was replaced by a newer one on {turn.thread_id} before it ran "
                f"(strategy coalesce): request {turn.id} answers that one, not yours",
                err=True,
            )
            return 5
    finally:
        if own:
            inbox.store.close()
        watch.close()
        printing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await printing
    if turn.status.is_terminal:
        return _print_ended(state, turn, "".join(printer.shown), as_json=as_json)
    waited = f"still {turn.status.value} after {wait:g} s"
    # Only our own request is ours to give up (not the turn ours was steered into).
    if turn.id == turn_id and _give_up(state, turn.id, f"its chat stopped waiting ({waited})"):
        click.echo(
            f"{waited}: request {turn.id} canceled (no runtime serves the store to "
            "finish it; its thread is free)",
            err=True,
        )
    else:
        click.echo(f"{waited}; request {turn.id} keeps its place", err=True)
    return 75


def _print_ended(state: CliState, turn: TurnRequest, streamed: str, *, as_json: bool) -> int:
    """Show how the turn ended (``streamed``: the answer's text already printed); the
    exit code: 0 when it completed, else 1."""
    from toolang_core import TurnStatus

    if as_json:
        return _print_json(state, turn)
    if turn.status is TurnStatus.COMPLETED:
        output = turn.output or ""
        if streamed and output.startswith(streamed):
            click.echo(output[len(streamed) :])  # the rest, if any, and the newline
        else:
            click.echo(("\n" if streamed else "") + output)
        return 0
    if streamed:  # the text shown was no answer (e.g. a rejected typed one): end its line
        click.echo("")
    click.echo(f"{turn.status.value}: {turn.error or turn.outcome or ''}".rstrip(": "), err=True)
    return 1


def _print_json(state: CliState, turn: TurnRequest) -> int:
    """The ended turn as one JSON object (``toolang chat --json``): a typed answer's
    ``output`` is its JSON value. Exit code 0 when it completed, else 1."""
    from toolang_core import TurnStatus, output_value

    shown = {
        "turn_id": turn.id,
        "thread_id": turn.thread_id,
        "status": turn.status.value,
        "output": output_value(turn, state.runtime.agents),
        "outcome": turn.outcome,
        "error": turn.error,
    }
    click.echo(json.dumps(shown, ensure_ascii=False))
    return 0 if turn.status is TurnStatus.COMPLETED else 1


async def _wait(
    state: CliState,
    inbox: Inbox,
    turn_id: str,
    wait: float,
    ask: LineReader | None,
    *,
    ours: bool,
) -> TurnRequest | None:
    """The turn once terminal (or ``wait`` passed); ``None`` when Ctrl-C stopped the
    wait.

    Stopped by Ctrl-C (or an error, raised again), a request of ``ours`` is given up
    (:func:`_give_up`) *before* this process stops serving it: the cancel is in the
    store even if a second Ctrl-C ends the process at once. Another's (the turn ours
    was steered into) is only left."""
    from toolang_core import await_turn

    waiting = asyncio.ensure_future(await_turn(state.runtime, inbox, turn_id, timeout=wait))
    try:
        return await _watch_approvals(
            inbox, turn_id, waiting, ask=ask, credential=state.config.credential_path
        )
    except (KeyboardInterrupt, asyncio.CancelledError):
        if ours and _give_up(state, turn_id, "its chat was interrupted (Ctrl-C)"):
            click.echo(
                f"\ninterrupted; request {turn_id} canceled (no runtime serves the store to "
                "finish it; its thread is free)",
                err=True,
            )
            await _wind_down(waiting, state)
        else:
            click.echo(f"\ndetached; request {turn_id} keeps its place", err=True)
        return None
    except Exception as exc:  # e.g. the one-shot runtime could not start
        if ours:
            _give_up(state, turn_id, f"its chat failed: {exc}")
        raise
    finally:
        if not waiting.done():  # stop watching (or serving) before its store closes
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await waiting


def _give_up(state: CliState, turn_id: str, why: str) -> bool:
    """End our own request when nothing else would run it (``toolang_core.give_up_turn``:
    no runtime serves the store, or this chat's one-shot does); whether it was ended."""
    from toolang_core import give_up_turn

    inbox = state.open_inbox()
    try:
        return give_up_turn(state.runtime, inbox, turn_id, why) is not None
    finally:
        inbox.store.close()


async def _wind_down(waiting: asyncio.Future[TurnRequest], state: CliState) -> None:
    """Let this chat's one-shot end the canceled turn itself (the cancel reaches a
    running turn at its next step), at most the runtime's shutdown grace; stopping the
    one-shot then hands back whatever still runs, and it ends ``canceled``."""
    grace = state.runtime.config.runtime.shutdown_grace_seconds
    with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
        await asyncio.wait_for(asyncio.shield(waiting), grace)


def _say_what_is_ahead(inbox: Inbox, turn: TurnRequest) -> None:
    """Say at once when the thread is busy: which request goes first, in which state,
    and what becomes of ours — never a silent wait."""
    import datetime as dt

    from toolang_core import TurnStatus

    if turn.steer:  # steering input: the running turn takes it (said when it did)
        return
    ahead = inbox.ahead_of(turn)
    if not ahead:
        return
    first = ahead[0]
    since = dt.datetime.fromtimestamp(first.started_at or first.created_at).strftime("%H:%M:%S")
    more = f" (and {len(ahead) - 1} more)" if len(ahead) > 1 else ""
    if inbox.store.runtime_running() is False:
        then = "no runtime serves the store, so this chat runs it first, then yours"
    else:
        then = "yours runs after it"
    click.echo(
        f"thread {turn.thread_id} is busy: request {first.id} is {first.status.value} "
        f"(since {since}){more}; {then}",
        err=True,
    )
    if first.status is TurnStatus.AWAITING_APPROVAL:
        click.echo(
            "  it waits for a person: see toolang approvals list (approve or deny it) or "
            f"toolang questions list (answer it), or cancel it: toolang cancel {first.id}",
            err=True,
        )


_REF = re.compile(r"[0-9a-z]{26}")  # the shape of toolang_core.new_id()


def _replaced(turn: TurnRequest, ref: str) -> bool:
    stored = turn.meta.get(SENDER_REF)
    # Only another chat's reference counts (a value masked on the way in does not).
    return isinstance(stored, str) and bool(_REF.fullmatch(stored)) and stored != ref


_STEERED_INTO = re.compile(r"delivered into running turn (\S+)")


def _steered_into(inbox: Inbox, turn: TurnRequest) -> str | None:
    """The running turn a steered request was delivered into."""
    from toolang_core import TurnFilter

    found = _STEERED_INTO.search(turn.output or "")
    if found:
        return found.group(1)
    # Otherwise: the turn of its thread that was running when it was taken.
    taken = turn.finished_at or turn.updated_at
    for other in inbox.store.list_turns(TurnFilter(thread_id=turn.thread_id, limit=50)):
        started, finished = other.started_at, other.finished_at
        running_then = started is not None and started <= taken
        if other.id != turn.id and running_then and (finished is None or finished >= taken):
            return other.id
    return None


class _StreamPrinter:
    """Prints an answer's text as it streams; remembers what it showed of the last model
    call (a new call starts a new line: the last call's text is the answer)."""

    def __init__(
        self, queue: asyncio.Queue[Any], *, still_ours: Callable[[], bool], echo: bool = True
    ) -> None:
        self.queue = queue
        self.still_ours = still_ours
        self.echo = echo
        self.shown: list[str] = []

    async def run(self) -> None:
        call = None
        delta = await self.queue.get()
        if not self.echo or not self.still_ours():  # asked once, when the turn has started
            return
        while True:
            if call is not None and delta.call != call:
                click.echo("")
                self.shown.clear()
            call = delta.call
            self.shown.append(delta.delta)
            click.echo(delta.delta, nl=False)
            sys.stdout.flush()
            delta = await self.queue.get()


async def _once(
    state: CliState,
    thread: str,
    agent: str | None,
    message: str,
    *,
    no_wait: bool,
    wait: float,
    owner: str | None,
    meta: dict[str, Any],
    as_json: bool,
    attach: tuple[str, ...] = (),
) -> None:
    # One connection to the store for the submission and the wait (each open checks the
    # store's schema and approval key again).
    inbox = state.open_inbox()
    try:
        turn_id, ref = _submit(
            state, thread, agent, message, owner, meta=meta, attach=attach, inbox=inbox
        )
        if no_wait:
            click.echo(json.dumps({"turn_id": turn_id}) if as_json else turn_id)
            return
        code = await _answer(state, turn_id, wait, ref=ref, as_json=as_json, inbox=inbox)
    finally:
        inbox.store.close()
    if code:
        sys.exit(code)


async def _interactive(
    state: CliState,
    thread: str,
    agent: str | None,
    wait: float,
    owner: str | None,
    *,
    meta: dict[str, Any],
    attach: tuple[str, ...] = (),
) -> None:
    """The session: Ctrl-D or Ctrl-C at the prompt leaves (Ctrl-C with exit 130);
    Ctrl-C while an answer is awaited (or at an approval question) detaches from that
    turn — it keeps its place — and returns to the prompt. ``/attach PATH|URL`` (and
    ``-a``, for the first message) attaches a file to the next message sent."""
    from toolang_core import ToolangError
    from toolang_source_chat.attach import Pending
    from toolang_source_chat.terminal import Interrupts, LineReader

    pending = Pending(state, agent=agent, owner=owner)
    pending.take(attach)  # -a: refused as `chat MESSAGE -a` refuses, before the session
    click.echo(
        f"chatting on {thread} (Ctrl-D or Ctrl-C to leave; /attach PATH to attach a file)",
        err=True,
    )
    reader = LineReader()
    with Interrupts() as interrupts:
        while True:
            try:
                line = await interrupts.run(reader.readline("you> "))
            except EOFError:
                click.echo("", err=True)
                return
            except KeyboardInterrupt:
                click.echo("", err=True)
                sys.exit(130)
            if not line.strip() or pending.command(line):
                continue
            try:
                turn_id, ref = _submit(
                    state, thread, agent, line, owner, meta=meta, attached=pending.refs
                )
            except ToolangError as exc:  # e.g. input the inbox refuses: say so, go on
                click.echo(f"error: {exc}", err=True)
                continue
            pending.sent()
            try:
                await interrupts.run(_answer(state, turn_id, wait, ask=reader, ref=ref))
            except KeyboardInterrupt:
                click.echo(f"\ndetached; request {turn_id} keeps its place", err=True)


# -- approvals while waiting ------------------------------------------------------------

APPROVAL_POLL_SECONDS = 0.2
CHOICES = {"y": "yes", "yes": "yes", "n": "no", "no": "no", "a": "always", "always": "always"}


async def _watch_approvals(
    inbox: Inbox,
    turn_id: str,
    waiting: asyncio.Future[TurnRequest],
    *,
    ask: LineReader | None,
    credential: Path,
) -> TurnRequest:
    """Wait for ``waiting``; meanwhile show each approval request and question the turn
    makes."""
    from toolang_core import ApprovalBook, TurnStatus
    from toolang_source_chat import questions

    book = ApprovalBook(inbox.store)
    shown: set[str] = set()
    while True:
        done, _ = await asyncio.wait({waiting}, timeout=APPROVAL_POLL_SECONDS)
        if done:
            return waiting.result()
        if inbox.get(turn_id).status is not TurnStatus.AWAITING_APPROVAL:
            continue
        await questions.show(inbox, turn_id, shown, ask=ask, credential=credential)
        for approval in book.list("pending"):
            if approval.turn_id != turn_id or approval.id in shown:
                continue
            shown.add(approval.id)
            _show(approval, inbox.redaction)
            if ask is not None:
                await _ask(book, approval, ask, credential)
            else:
                _how_to_decide(approval)


def _show(approval: Approval, redaction: RedactionPolicy) -> None:
    from toolang_core import canonical_params

    params: dict[str, Any] = redaction.value(dict(approval.params))
    click.echo(
        f"approval needed ({approval.id}): {approval.agent} wants to run {approval.tool}\n"
        f"  params: {canonical_params(params)}",
        err=True,
    )


def _how_to_decide(approval: Approval) -> None:
    click.echo(
        f"the turn awaits approval; decide from another terminal:\n"
        f"  toolang approvals approve {approval.id}   "
        f"(or: toolang approvals deny {approval.id})",
        err=True,
    )


async def _ask(
    book: ApprovalBook, approval: Approval, reader: LineReader, credential: Path
) -> None:
    """Ask the person at the terminal, and record their decision as ``cli:<os user>``
    (only where the operator's ``credential`` can be read: see ``cli_principal``)."""
    from toolang_core import ApprovalError, CredentialError, cli_principal

    while True:
        try:
            reply = await reader.readline("approve? [y]es / [n]o / [a]lways: ")
        except EOFError:
            click.echo("", err=True)
            _how_to_decide(approval)
            return
        choice = CHOICES.get(reply.strip().lower())
        if choice is not None:
            break
        click.echo(
            "answer y (run it), n (refuse it) or a (run it, and this tool on this "
            "thread from now on)",
            err=True,
        )
    try:
        by = cli_principal(credential, action=f"decide {approval.id}")
        decided = book.decide(
            approval.id, approved=choice != "no", by=by, always=choice == "always"
        )
    except CredentialError as exc:
        click.echo(f"error: {exc}", err=True)
        return
    except ApprovalError as exc:  # decided elsewhere, or expired, while we asked
        click.echo(f"error: {exc}", err=True)
        return
    granted = f"; {decided.tool} is granted on {decided.thread_id}" if decided.always else ""
    click.echo(f"{decided.status}{granted}", err=True)
