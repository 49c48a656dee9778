"""``toolang approvals list | show | approve | deny``, from any process.

Every command works against the configured execution store, so a person can decide
from another terminal while ``toolang run`` (or a ``toolang chat``) waits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from toolang_core.cli import CliState, pass_state

if TYPE_CHECKING:
    from toolang_core import Approval, ApprovalBook, ExecutionStore


def _open(state: CliState, *, write: bool) -> ExecutionStore:
    """The configured store; :raises StoreMissing: when nothing has run yet."""
    store = state.open_store(read_only=True)  # never creates a store just to find nothing
    if write:
        store.close()
        store = state.open_store(read_only=False)
    return store


def _book(store: ExecutionStore) -> ApprovalBook:
    from toolang_core import ApprovalBook

    return ApprovalBook(store)


def _turn_status(store: ExecutionStore, turn_id: str) -> str:
    turn = store.get(turn_id)
    return turn.status.value if turn is not None else "gone"


def approval_json(approval: Approval, turn_status: str) -> dict[str, Any]:
    import attrs

    from toolang_hook_approval_gate.gate import mask

    data = attrs.asdict(approval)
    data["params"] = mask(approval.params)
    data["turn_status"] = turn_status
    return data


@click.group()
def approvals() -> None:
    """Tool calls waiting for a person's decision (toolang-hook-approval-gate)."""


@approvals.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include decided and expired requests.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@pass_state
def list_(state: CliState, *, show_all: bool, as_json: bool) -> None:
    """List approval requests (pending ones unless --all), oldest first."""
    from toolang_core import StoreMissing, canonical_params
    from toolang_core.cli import ago, echo_json, short, table
    from toolang_hook_approval_gate.gate import mask

    try:
        store = _open(state, write=False)
    except StoreMissing as exc:
        if as_json:
            echo_json([])
        else:
            click.echo(f"no approval requests ({exc})", err=True)
        return
    try:
        found = _book(store).list(None if show_all else "pending")
        rows = [(a, _turn_status(store, a.turn_id)) for a in found]
    finally:
        store.close()
    if as_json:
        echo_json([approval_json(a, status) for a, status in rows])
        return
    if not rows:
        what = "approval requests" if show_all else "pending approval requests"
        click.echo(f"no {what}", err=True)
        return
    table(
        [
            (
                a.id,
                a.status if a.decided_by is None else f"{a.status} by {a.decided_by}",
                a.tool,
                f"{a.turn_id} ({status})",
                a.thread_id,
                a.requester or "-",
                ago(a.created_at),
                short(canonical_params(mask(a.params)), 50),
            )
            for a, status in rows
        ],
        ["ID", "STATUS", "TOOL", "TURN", "THREAD", "REQUESTER", "ASKED", "PARAMS"],
    )


@approvals.command("show")
@click.argument("approval_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_state
def show(state: CliState, *, approval_id: str, as_json: bool) -> None:
    """Show one approval request with its parameters (secrets masked)."""
    import json

    from toolang_core.cli import echo_json, when

    store = _open(state, write=False)
    try:
        approval = _book(store).get(approval_id)
        status = _turn_status(store, approval.turn_id)
    finally:
        store.close()
    data = approval_json(approval, status)
    if as_json:
        echo_json(data)
        return
    decided = (
        f"{approval.status} by {approval.decided_by or '-'} at {when(approval.decided_at)}"
        + (f": {approval.reason}" if approval.reason else "")
        + (" (always, on this thread)" if approval.always else "")
        if approval.status != "pending"
        else "pending"
    )
    click.echo(
        f"id         {approval.id}\ntool       {approval.tool}\n"
        f"turn       {approval.turn_id} ({status})\nthread     {approval.thread_id}\n"
        f"agent      {approval.agent}\nrequester  {approval.requester or '-'}\n"
        f"asked      {when(approval.created_at)}\n"
        f"expires    {when(approval.expires_at) if approval.expires_at else 'never'}\n"
        f"status     {decided}\nhash       {approval.params_hash}\n\n"
        + json.dumps(data["params"], indent=2, ensure_ascii=False)
    )


@approvals.command("approve")
@click.argument("approval_id", metavar="ID")
@click.option(
    "--always", is_flag=True, help="Also grant this tool on the request's thread from now on."
)
@click.option("--reason", default=None, help="Why (recorded with the decision).")
@pass_state
def approve(state: CliState, *, approval_id: str, always: bool, reason: str | None) -> None:
    """Approve request ID: the waiting tool call runs and its turn resumes."""
    _decide(state, approval_id, approved=True, always=always, reason=reason)


@approvals.command("deny")
@click.argument("approval_id", metavar="ID")
@click.option("--reason", default=None, help="Why (the model is told).")
@pass_state
def deny(state: CliState, *, approval_id: str, reason: str | None) -> None:
    """Deny request ID: the model is told the call was denied, and the turn goes on."""
    _decide(state, approval_id, approved=False, always=False, reason=reason)


def _decide(
    state: CliState, approval_id: str, *, approved: bool, always: bool, reason: str | None
) -> None:
    """Record the decision as ``cli:<os user>``, once this terminal showed it is a
    person's (:func:`toolang_core.cli_principal`: not a tool's process, and able to read
    the operator's credential).

    :raises CredentialError: no credential to read here (nothing was changed).
    :raises ApprovalError: unknown or already decided.
    """
    from toolang_core import cli_principal

    action = f"{'approve' if approved else 'deny'} {approval_id}"
    _open(state, write=False).close()  # no store yet: say so first
    by = cli_principal(state.config.credential_path, action=action)  # before any write
    store = _open(state, write=True)
    try:
        decided = _book(store).decide(
            approval_id, approved=approved, by=by, reason=reason, always=always
        )
    finally:
        store.close()
    click.echo(f"{decided.status} {decided.id}: {decided.tool} on turn {decided.turn_id}")
    if decided.always:
        click.echo(f"{decided.tool} is granted on thread {decided.thread_id} from now on")
