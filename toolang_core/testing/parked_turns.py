"""A kit for the scenarios of turns parked on a person's decision, run by the core's
tests on SQLite and by toolang-store-postgres's on PostgreSQL.

The model (:func:`answer`, for :class:`~toolang_core.testing.models.ScriptedModel`)
answers "ask NAME" with a call of ``touch`` (which a person must approve: the
:class:`ParkingPlugin` gate asks), "hold NAME" with a call of ``hold`` (which waits
until the test opens ``GATES[NAME]``), anything else at once with "quick"; a tool's
result gets "done".
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from toolang_core.markers import hookimpl
from toolang_core.store.types import NewTurnRequest
from toolang_core.testing.approvals import ask_a_person
from toolang_core.testing.models import Step, text, tool_call
from toolang_core.testing.runtimes import wait_status
from toolang_core.tools.approvals import ApprovalBook
from toolang_core.tools.types import Tool

if TYPE_CHECKING:
    from toolang_core.models.types import ModelRequest
    from toolang_core.runtime import Runtime

GATES: dict[str, asyncio.Event] = {}
"""Gates of the ``hold`` calls, by name (made by the test, in its event loop)."""


def touch(name: str) -> str:
    """Touch NAME (a person approves each call)."""
    return f"touched {name}"


async def hold(name: str) -> str:
    """Hold a slot until the test opens the gate NAME."""
    await GATES[name].wait()
    return f"held {name}"


def answer(request: ModelRequest) -> Step:
    """The scripted model's answer to ``request`` (see the module)."""
    last = request.messages[-1]
    if last.role == "tool":
        return text("done")
    verb, _, name = last.content.partition(" ")
    if verb == "ask":
        return tool_call("touch", {"name": name})
    if verb == "hold":
        return tool_call("hold", {"name": name})
    return text("quick")


class ParkingPlugin:
    """``touch`` and ``hold``, and a gate that asks a person about every ``touch``."""

    @hookimpl
    def toolang_register_tools(self, register: Any) -> None:
        register(Tool.from_function(touch, blocking=False))
        register(Tool.from_function(hold, blocking=False))

    @hookimpl
    def toolang_approve_tool_call(self, call: Any, ctx: Any) -> Any:
        return ask_a_person(call, ctx, prompt="touch?") if call.name == "touch" else None


def submit(runtime: Runtime, thread: str, words: str) -> str:
    """Submit ``words`` on ``thread`` (source chat) to the serving runtime's inbox."""
    assert runtime.inbox is not None
    return runtime.inbox.submit(NewTurnRequest(source="chat", thread_id=thread, input=words)).id


async def parked(runtime: Runtime, *names: str) -> dict[str, str]:
    """Submit "ask NAME" on thread chat:NAME for each name; return name → turn id once
    every one awaits approval."""
    ids = {name: submit(runtime, f"chat:{name}", f"ask {name}") for name in names}
    for turn_id in ids.values():
        await wait_status(runtime.inbox, turn_id, {"awaiting_approval"}, timeout=30)
    return ids


async def answered(runtime: Runtime, turn_id: str) -> None:
    """Wait until ``turn_id`` saw its person's answer and waits for a slot (or runs)."""
    scheduler = runtime.scheduler
    assert scheduler is not None
    async with asyncio.timeout(30):
        while turn_id not in scheduler.resuming:
            if runtime.inbox is not None and runtime.inbox.get(turn_id).status.value != (
                "awaiting_approval"
            ):
                return
            await asyncio.sleep(0.01)


def approve_all(runtime: Runtime) -> None:
    """Approve every pending request, as the person ``alice``."""
    assert runtime.inbox is not None
    book = ApprovalBook(runtime.inbox.store)
    for request in book.list("pending"):
        book.decide(request.id, approved=True, by="alice")
