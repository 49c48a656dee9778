"""An approval is bound to the call's own parameters, not to what a person is shown.

With the SecurityFilter's personal-data detector an address in a call is masked
(``[email redacted]``): the request shows the masked call, and the turn's stored model
answer keeps it masked. A process that writes the store, but has no approval key,
rewrote that stored answer while the turn was handed back (a restart) to another
address; the person approved what they were shown, and the resumed turn sent to the
other address. The request now keeps a seal of the call's own parameters: only they run
on its approval.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable

import toolang_hook_approval_gate
import toolang_hook_security_filter
from toolang_core import ApprovalBook, NewTurnRequest, Tool, TurnStatus, hookimpl
from toolang_core.testing.models import text, tool_call
from toolang_core.testing.runtimes import serve_until_parked

CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.02
shutdown_grace_seconds = 0

[models]
default = "scripted"

[plugins.hook-security-filter]
exempt_tools = ["send_mail"]
"""
MAIL = {"to": "alice@example.com", "text": "the invoice"}


class Mail:
    def __init__(self) -> None:
        self.sent: list[dict[str, object]] = []

    @hookimpl
    def toolang_register_tools(self, register: Callable[[Tool], None]) -> None:
        def send_mail(**params: object) -> str:
            self.sent.append(params)
            return "sent"

        register(
            Tool(
                name="send_mail",
                description="send a mail",
                parameters={"type": "object"},
                function=send_mail,
                blocking=False,
            )
        )


def test_a_masked_parameter_rewritten_in_the_store_does_not_run_on_the_approval(
    toolang_runtime, toolang_scripted_model
):
    model = toolang_scripted_model([tool_call("send_mail", MAIL, call_id="c1"), text("done")])
    mail = Mail()

    def runtime():
        return toolang_runtime(
            CONFIG + '[plugins.hook-approval-gate]\nrequire = ["send_mail"]\n',
            plugins={
                "scripted": model.plugin(),
                "mail": mail,
                "hook-approval-gate": toolang_hook_approval_gate,
                "hook-security-filter": toolang_hook_security_filter,
            },
        )

    first = runtime()
    inbox = first.open_inbox()
    book = ApprovalBook(inbox.store)
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="go")).id

    serve_until_parked(first, turn_id)
    (request,) = book.list("pending")
    assert "alice@example.com" not in str(request.params)  # the person sees it masked
    with sqlite3.connect(str(inbox.store.location)) as db:
        changed = db.execute(
            "UPDATE turn_steps SET data = replace(data, '[email redacted]', "
            "'mallory@evil.example') WHERE turn_id = ? AND kind = 'model_call'",
            (turn_id,),
        ).rowcount
    assert changed == 1
    book.decide(request.id, approved=True, by="alice")
    asyncio.run(runtime().serve(asyncio.Event(), sources=(), until_idle=True))
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    inbox.store.close()
    assert mail.sent == []
