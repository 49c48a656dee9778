"""Shared by this plugin's tests: tools with visible side effects, and a driver that runs
a real agent turn and plays the person who decides approval requests."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

import toolang_hook_approval_gate as plugin
from toolang_core import (
    Approval,
    ApprovalBook,
    NewTurnRequest,
    Runtime,
    StepRecord,
    Tool,
    TurnRequest,
    hookimpl,
)

AGENT_CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.02
shutdown_grace_seconds = 0

[models]
default = "scripted"
"""


class Tools:
    """``fs_write``, ``fs_read`` and ``exec_status``, recording what really ran."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, object]]] = []

    def _tool(self, name: str) -> Tool:
        def function(**params: object) -> str:
            self.ran.append((name, params))
            return f"{name} ok"

        return Tool(
            name=name,
            description=name,
            parameters={"type": "object"},
            function=function,
            blocking=False,
        )

    @hookimpl
    def toolang_register_tools(self, register: Callable[[Tool], None]) -> None:
        for name in ("fs_write", "fs_read", "exec_status"):
            register(self._tool(name))


def make_runtime(
    make: Callable[..., Runtime], model: object, tools: Tools, settings: str = ""
) -> Runtime:
    section = f"[plugins.hook-approval-gate]\n{settings}" if settings else ""
    return make(
        AGENT_CONFIG + section,
        plugins={
            "scripted": model.plugin(),  # type: ignore[attr-defined]
            "tools": tools,
            "hook-approval-gate": plugin,
        },
    )


Decide = Callable[[ApprovalBook, Approval], None]


def approve(book: ApprovalBook, approval: Approval) -> None:
    book.decide(approval.id, approved=True, by="alice")


def approve_always(book: ApprovalBook, approval: Approval) -> None:
    book.decide(approval.id, approved=True, by="alice", always=True)


def deny(book: ApprovalBook, approval: Approval) -> None:
    book.decide(approval.id, approved=False, by="bob", reason="not today")


def run_turn(
    runtime: Runtime,
    decide: Decide | None = None,
    *,
    thread: str = "cli:t",
    text: str = "go",
    deadline_seconds: float = 30,
) -> tuple[TurnRequest, list[StepRecord]]:
    """Submit one turn, serve it, decide each request it makes with ``decide``."""
    inbox = runtime.open_inbox()
    book = ApprovalBook(inbox.store)
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id=thread, input=text)).id

    async def scenario() -> None:
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        deadline = time.monotonic() + deadline_seconds
        decided: set[str] = set()
        try:
            while not inbox.get(turn_id).status.is_terminal:
                assert time.monotonic() < deadline, f"turn {turn_id} never finished"
                for approval in book.list("pending"):
                    if decide is not None and approval.id not in decided:
                        decided.add(approval.id)
                        decide(book, approval)
                await asyncio.sleep(0.01)
        finally:
            stop.set()
            await serving

    asyncio.run(scenario())
    turn, steps = inbox.get(turn_id), inbox.store.steps(turn_id)
    inbox.store.close()
    return turn, steps


def tool_steps(steps: list[StepRecord]) -> list[StepRecord]:
    return [s for s in steps if s.kind == "tool_call"]


def gate_stage(step: StepRecord) -> dict[str, object]:
    """The ApprovalGate stage that decided a tool call (the last one recorded)."""
    stages = [s for s in step.data["chain"] if s["stage"] == "ApprovalGate"]
    return dict(stages[-1])


def tool_message(request: object, index: int = -1) -> dict[str, object]:
    """What the model was told about a tool call (the tool message's JSON)."""
    message = request.messages[index]  # type: ignore[attr-defined]
    assert message.role == "tool", message
    return dict(json.loads(message.content))
