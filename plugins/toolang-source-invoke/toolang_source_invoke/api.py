"""The Python API: ``invoke(...)`` runs one turn and returns its result."""

from __future__ import annotations

import asyncio
from pathlib import Path

import attrs

from toolang_core import (
    NewTurnRequest,
    Runtime,
    TurnStatus,
    await_turn,
    find_config,
    load_config,
    new_id,
)


@attrs.frozen
class InvokeResult:
    """How one invocation ended."""

    turn_id: str
    status: TurnStatus
    output: str | None = None
    error: str | None = None
    outcome: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is TurnStatus.COMPLETED

    @property
    def exit_code(self) -> int:
        if self.status is TurnStatus.COMPLETED:
            return 0
        if self.status is TurnStatus.FAILED:
            return 1
        if self.status.is_terminal:
            return 2
        return 75


async def ainvoke(
    text: str,
    *,
    agent: str | None = None,
    timeout: float | None = None,
    runtime: Runtime | None = None,
    config_path: Path | None = None,
) -> InvokeResult:
    """Run ``text`` as one turn of source ``invoke`` and wait for its result.

    Uses ``runtime`` if given, else one built from ``config_path`` (or the usual
    ``toolang.toml`` lookup). With ``timeout`` it returns the current state when the time
    is up; the request itself keeps going.
    """
    if runtime is None:
        runtime = Runtime.from_config(load_config(find_config(config_path)))
    inbox = runtime.open_inbox()
    try:
        thread = f"invoke:{new_id()}"
        turn_id = inbox.submit(
            NewTurnRequest(
                source="invoke",
                thread_id=thread,
                input=text,
                agent=agent,
                channel="api",
                timeout_seconds=timeout,
            )
        ).id
        turn = await await_turn(runtime, inbox, turn_id, timeout=timeout)
    finally:
        inbox.store.close()
    return InvokeResult(turn.id, turn.status, turn.output, turn.error, turn.outcome)


def invoke(text: str, **kwargs: object) -> InvokeResult:
    """Synchronous :func:`ainvoke` (do not call it from a running event loop)."""
    return asyncio.run(ainvoke(text, **kwargs))  # type: ignore[arg-type]
