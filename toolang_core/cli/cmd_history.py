"""``toolang threads fork`` and ``toolang turns replay``: history as a tool
(:mod:`toolang_core.history`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from toolang_core.cli.output import echo_json, short
from toolang_core.cli.state import CliState, pass_state

if TYPE_CHECKING:
    from toolang_core.history import ReplayReport
    from toolang_core.inbox.inbox import Inbox
    from toolang_core.store.types import TurnRequest

STILL_WAITING = 75
"""The exit code of a fork or replay still running when ``--timeout`` ended the wait."""

_OWNER = click.option(
    "--owner",
    envvar="TOOLANG_OWNER",
    default=None,
    help="Whose thread this is (default: $TOOLANG_OWNER, else none: the operator's).",
)
_TIMEOUT = click.option(
    "--timeout", type=click.FloatRange(min=0, min_open=True), default=None, help="Seconds to wait."
)


@click.command("fork")
@click.argument("thread_id")
@click.option("--at", "at", required=True, help="The turn: its position (1 = first) or its id.")
@click.option("--edit-input", default=None, help="The turn's new input (default: as it was).")
@click.option("--agent", default=None, help="Another agent answers the turn.")
@click.option("--model", default=None, help="Another model answers for the agent.")
@click.option("--thread", "new_thread", default=None, help="The new thread (default fork:<id>).")
@_OWNER
@_TIMEOUT
@click.option("--no-wait", is_flag=True, help="Queue the turn and print its id; do not wait.")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def threads_fork(
    state: CliState,
    *,
    thread_id: str,
    at: str,
    edit_input: str | None,
    agent: str | None,
    model: str | None,
    new_thread: str | None,
    owner: str | None,
    timeout: float | None,
    no_wait: bool,
    as_json: bool,
) -> None:
    """Fork a thread at a turn: a new thread with the history before it (by reference;
    the original is never changed), where that turn runs again — with its input
    edited, another agent or another model. Only the thread's owner may fork it."""
    from toolang_core.history import fork_thread

    _check_names(state, agent, model)
    inbox = state.open_inbox()
    try:
        forked = fork_thread(
            inbox,
            thread_id,
            at,
            owner=owner or None,
            edit_input=edit_input,
            agent=agent,
            model=model,
            new_thread=new_thread,
        )
        turn = None if no_wait else _wait(state, inbox, forked.turn_id, timeout)
    finally:
        inbox.store.close()
    if as_json:
        echo_json({"fork": forked, "turn": turn})
    else:
        click.echo(
            f"forked {forked.origin} at turn {forked.at_turn} into {forked.thread_id} "
            f"({len(forked.inherited)} earlier turn(s) by reference); turn {forked.turn_id}"
        )
        if turn is not None:
            _echo_turn(turn)
    _exit_for(turn)


@click.command("replay")
@click.argument("turn_id")
@click.option("--model", default=None, help="The model the turn runs against.")
@click.option("--agent", default=None, help="Another agent answers the turn.")
@click.option(
    "--allow-tools",
    default="",
    help="Tools (comma separated) a replay may really run when a call was not recorded.",
)
@_OWNER
@_TIMEOUT
@click.option("--json", "as_json", is_flag=True)
@pass_state
def turns_replay(
    state: CliState,
    *,
    turn_id: str,
    model: str | None,
    agent: str | None,
    allow_tools: str,
    owner: str | None,
    timeout: float | None,
    as_json: bool,
) -> None:
    """Run a finished turn again against another model or agent, without side effects:
    each tool call is answered from the recorded results when it matches one (same
    tool, same parameters); any other call is stopped, never run, and reported —
    unless --allow-tools names its tool. It runs on a new thread (replay:<id>) and
    leaves the original untouched. Only the turn's owner may replay it."""
    import asyncio

    from toolang_core.errors import UsageError
    from toolang_core.history import replay_turn

    if model is None and agent is None:
        raise UsageError("--model or --agent: say what the replay runs against")
    _check_names(state, agent, model)
    allowed = [name.strip() for name in allow_tools.split(",") if name.strip()]
    inbox = state.open_inbox()
    try:
        report = asyncio.run(
            replay_turn(
                state.runtime,
                inbox,
                turn_id,
                owner=owner or None,
                model=model,
                agent=agent,
                allow_tools=allowed,
                timeout=timeout,
            )
        )
    finally:
        inbox.store.close()
    if as_json:
        echo_json(report_json(report))
    else:
        _echo_report(report)
    _exit_for_status(report.status)


def report_json(report: ReplayReport) -> dict[str, Any]:
    """A replay's report as JSON, its stopped calls listed apart."""
    import cattrs

    data: dict[str, Any] = cattrs.unstructure(report)
    data["stopped"] = cattrs.unstructure(list(report.stopped))
    return data


def _check_names(state: CliState, agent: str | None, model: str | None) -> None:
    from toolang_core.history import check_agent_and_model

    check_agent_and_model(state.runtime, agent=agent, model=model)


def _wait(state: CliState, inbox: Inbox, turn_id: str, timeout: float | None) -> TurnRequest:
    import asyncio

    from toolang_core.runtime.oneshot import await_turn

    return asyncio.run(await_turn(state.runtime, inbox, turn_id, timeout=timeout))


def _echo_turn(turn: TurnRequest) -> None:
    click.echo(f"[{turn.status.value}] > {short(turn.input, 70)}")
    if turn.output or turn.error:
        click.echo(turn.output or turn.error or "")


def _echo_report(report: ReplayReport) -> None:
    click.echo(
        f"replay of turn {report.turn_id} as {report.replay_turn_id} on {report.thread_id}: "
        f"{report.status}"
    )
    for call in report.calls:
        params = short(json.dumps(call.params, ensure_ascii=False), 60)
        line = f"  {call.answer:<9} {call.name} {params}"
        if call.answer == "stopped":
            line += "  (not run)"
        click.echo(line)
    click.echo(f"answer:   {report.output if report.output is not None else report.error}")
    click.echo(f"recorded: {report.original_output}")
    if report.stopped:
        names = ",".join(sorted({c.name for c in report.stopped}))
        click.echo(f"{len(report.stopped)} call(s) stopped; --allow-tools {names} would run them")


def _exit_for(turn: TurnRequest | None) -> None:
    if turn is not None:
        _exit_for_status(turn.status.value)


def _exit_for_status(status: str) -> None:
    from toolang_core.store.types import TurnStatus

    value = TurnStatus(status)
    if not value.is_terminal:
        raise SystemExit(STILL_WAITING)
    if value is not TurnStatus.COMPLETED:
        raise SystemExit(1)
