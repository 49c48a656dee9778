"""``toolang chat``."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from toolang_core.cli import CliState, pass_state

if TYPE_CHECKING:
    from toolang_core import Approval, ApprovalBook, Inbox, TurnRequest


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
@pass_state
def chat(
    state: CliState,
    *,
    message: str | None,
    thread_name: str | None,
    agent: str | None,
    no_wait: bool,
    interactive: bool,
) -> None:
    """Send MESSAGE to an agent and print its answer."""
    from toolang_core import UsageError

    settings = state.runtime.settings.get("source-chat")
    thread = thread_id(thread_name or str(getattr(settings, "default_thread", "default")))
    wait = float(getattr(settings, "wait_seconds", 300.0))
    if interactive:
        asyncio.run(_interactive(state, thread, agent, wait))
        return
    if not message:
        raise UsageError("give a MESSAGE, or use -i for an interactive session")
    asyncio.run(_once(state, thread, agent, message, no_wait=no_wait, wait=wait))


def _submit(state: CliState, thread: str, agent: str | None, message: str) -> str:
    from toolang_core import NewTurnRequest

    inbox = state.open_inbox()
    try:
        return inbox.submit(
            NewTurnRequest(
                source="chat",
                thread_id=thread,
                input=message,
                agent=agent,
                channel="cli",
                sender="owner",
            )
        ).id
    finally:
        inbox.store.close()


async def _answer(state: CliState, turn_id: str, wait: float, *, ask: bool = False) -> int:
    """Wait for the answer and print it; return the exit code.

    While the turn awaits approval, show each request: ``ask`` prompts for the decision
    (``toolang chat -i``), otherwise say how to decide from another terminal.
    """
    from toolang_core import TurnStatus, TurnStreams, await_turn

    inbox = state.open_inbox()
    # When this process runs the turn itself (no runtime serves the store), its answer
    # streams here and is printed as it comes.
    watch = TurnStreams.of(state.runtime).watch(turn_id)
    printer = _StreamPrinter(watch.queue)
    printing = asyncio.ensure_future(printer.run())
    waiting = asyncio.ensure_future(await_turn(state.runtime, inbox, turn_id, timeout=wait))
    try:
        turn = await _watch_approvals(inbox, turn_id, waiting, ask=ask)
    except (KeyboardInterrupt, asyncio.CancelledError):
        click.echo(f"\ndetached; request {turn_id} keeps its place", err=True)
        return 130
    finally:
        if not waiting.done():  # stop watching (or serving) before its store closes
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await waiting
        inbox.store.close()
        watch.close()
        printing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await printing
    streamed = "".join(printer.shown)
    if turn.status is TurnStatus.COMPLETED:
        output = turn.output or ""
        if streamed and output.startswith(streamed):
            click.echo(output[len(streamed) :])  # the rest, if any, and the newline
        else:
            click.echo(("\n" if streamed else "") + output)
        return 0
    if not turn.status.is_terminal:
        click.echo(f"still {turn.status.value} after {wait:g} s; request {turn_id}", err=True)
        return 75
    click.echo(f"{turn.status.value}: {turn.error or turn.outcome or ''}".rstrip(": "), err=True)
    return 1


class _StreamPrinter:
    """Prints an answer's text as it streams; remembers what it showed of the last model
    call (a new call starts a new line: the last call's text is the answer)."""

    def __init__(self, queue: asyncio.Queue[Any]) -> None:
        self.queue = queue
        self.shown: list[str] = []

    async def run(self) -> None:
        call = None
        while True:
            delta = await self.queue.get()
            if call is not None and delta.call != call:
                click.echo("")
                self.shown.clear()
            call = delta.call
            self.shown.append(delta.delta)
            click.echo(delta.delta, nl=False)
            sys.stdout.flush()


async def _once(
    state: CliState, thread: str, agent: str | None, message: str, *, no_wait: bool, wait: float
) -> None:
    turn_id = _submit(state, thread, agent, message)
    if no_wait:
        click.echo(turn_id)
        return
    code = await _answer(state, turn_id, wait)
    if code:
        sys.exit(code)


async def _interactive(state: CliState, thread: str, agent: str | None, wait: float) -> None:
    click.echo(f"chatting on {thread} (Ctrl-D to leave)", err=True)
    while True:
        try:
            line = await asyncio.to_thread(input, "you> ")
        except EOFError:
            click.echo("", err=True)
            return
        if not line.strip():
            continue
        turn_id = _submit(state, thread, agent, line)
        await _answer(state, turn_id, wait, ask=True)


# -- approvals while waiting ------------------------------------------------------------

APPROVAL_POLL_SECONDS = 0.2
CHOICES = {"y": "yes", "yes": "yes", "n": "no", "no": "no", "a": "always", "always": "always"}


async def _watch_approvals(
    inbox: Inbox, turn_id: str, waiting: asyncio.Future[TurnRequest], *, ask: bool
) -> TurnRequest:
    """Wait for ``waiting``; meanwhile show each approval request the turn makes."""
    from toolang_core import ApprovalBook, TurnStatus

    book = ApprovalBook(inbox.store)
    shown: set[str] = set()
    while True:
        done, _ = await asyncio.wait({waiting}, timeout=APPROVAL_POLL_SECONDS)
        if done:
            return waiting.result()
        if inbox.get(turn_id).status is not TurnStatus.AWAITING_APPROVAL:
            continue
        for approval in book.list("pending"):
            if approval.turn_id != turn_id or approval.id in shown:
                continue
            shown.add(approval.id)
            _show(approval)
            if ask:
                await _ask(book, approval)
            else:
                _how_to_decide(approval)


def _show(approval: Approval) -> None:
    from toolang_core import canonical_params

    click.echo(
        f"approval needed ({approval.id}): {approval.agent} wants to run {approval.tool}\n"
        f"  params: {canonical_params(_mask(approval.params))}",
        err=True,
    )


def _how_to_decide(approval: Approval) -> None:
    click.echo(
        f"the turn awaits approval; decide from another terminal:\n"
        f"  toolang approvals approve {approval.id}   "
        f"(or: toolang approvals deny {approval.id})",
        err=True,
    )


async def _ask(book: ApprovalBook, approval: Approval) -> None:
    """Ask the person at the terminal, and record their decision."""
    from toolang_core import ApprovalError

    while True:
        try:
            reply = await asyncio.to_thread(input, "approve? [y]es / [n]o / [a]lways: ")
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
        decided = book.decide(
            approval.id, approved=choice != "no", by=_os_user(), always=choice == "always"
        )
    except ApprovalError as exc:  # decided elsewhere, or expired, while we asked
        click.echo(f"error: {exc}", err=True)
        return
    granted = f"; {decided.tool} is granted on {decided.thread_id}" if decided.always else ""
    click.echo(f"{decided.status}{granted}", err=True)


def _os_user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name and no passwd entry (some containers)
        return "unknown user"


def _mask(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with secrets masked (``toolang_core.redact``)."""
    from toolang_core import redact

    masked: dict[str, Any] = redact(dict(params))
    return masked
