"""``toolang chat``."""

from __future__ import annotations

import asyncio
import sys

import click

from toolang_core.cli import CliState, pass_state


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


async def _answer(state: CliState, turn_id: str, wait: float) -> int:
    """Wait for the answer and print it; return the exit code."""
    from toolang_core import TurnStatus, await_turn

    inbox = state.open_inbox()
    try:
        turn = await await_turn(state.runtime, inbox, turn_id, timeout=wait)
    except (KeyboardInterrupt, asyncio.CancelledError):
        click.echo(f"\ndetached; request {turn_id} keeps its place", err=True)
        return 130
    finally:
        inbox.store.close()
    if turn.status is TurnStatus.COMPLETED:
        click.echo(turn.output or "")
        return 0
    if not turn.status.is_terminal:
        click.echo(f"still {turn.status.value} after {wait:g} s; request {turn_id}", err=True)
        return 75
    click.echo(f"{turn.status.value}: {turn.error or turn.outcome or ''}".rstrip(": "), err=True)
    return 1


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
        await _answer(state, turn_id, wait)
