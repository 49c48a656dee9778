"""Tasks a tool starts may not end the runtime.

A tool's own ``sys.exit()`` fails its call (:mod:`toolang_core.tools.chain`). A task the
tool starts (``create_task``, ``ensure_future``, ``gather``) runs on after the call
returned, and asyncio re-raises a task's ``SystemExit`` out of the event loop, which
ends the runtime and every turn in it. So while a tool's function runs, the tool's
name is in the context (:func:`running`) — and every task started from there copies
that context — and a serving runtime's event loop makes such tasks through
:func:`contained`: their ``SystemExit`` becomes a ``RuntimeError`` naming the tool, the
task's own failure. Other tasks are made as before (the check is one context lookup).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Coroutine, Generator, Iterator
from typing import Any, Final, TypeVar

import structlog

log = structlog.get_logger("toolang.tools")

T = TypeVar("T")

_TOOL: Final[contextvars.ContextVar[str | None]] = contextvars.ContextVar(
    "toolang_running_tool", default=None
)

TaskFactory = Any
"""What ``loop.get_task_factory()`` gives (typeshed's alias is private)."""


class running:
    """The block in which ``tool``'s function runs: the tasks it starts are its own.
    (A class, not a generator: it is on every tool call's path.)"""

    __slots__ = ("_token", "_tool")

    def __init__(self, tool: str) -> None:
        self._tool = tool

    def __enter__(self) -> None:
        self._token = _TOOL.set(self._tool)

    def __exit__(self, *exc: object) -> None:
        _TOOL.reset(self._token)


async def _contained(coro: Coroutine[Any, Any, T], tool: str) -> T:
    try:
        return await coro
    except SystemExit as exc:
        log.warning("tool.task_exit", tool=tool, code=exc.code)
        raise RuntimeError(
            f"a task tool {tool!r} started called sys.exit({exc.code!r}): a tool's task "
            "may not end the runtime (it fails instead)"
        ) from None


def contained(loop: asyncio.AbstractEventLoop, previous: TaskFactory | None) -> TaskFactory:
    """A task factory for ``loop`` that makes tasks as ``previous`` did (or as asyncio
    does), a task started inside a tool call wrapped in :func:`_contained`."""

    def factory(
        loop: asyncio.AbstractEventLoop,
        coro: Coroutine[Any, Any, Any] | Generator[Any, None, Any],
        context: contextvars.Context | None = None,
        **kwargs: Any,
    ) -> asyncio.Future[Any]:
        tool = _TOOL.get() if context is None else context.get(_TOOL)
        if tool is not None and asyncio.iscoroutine(coro):
            coro = _contained(coro, tool)
        if context is not None:
            kwargs["context"] = context
        if previous is not None:
            return previous(loop, coro, **kwargs)  # type: ignore[no-any-return]
        return asyncio.Task(coro, loop=loop, **kwargs)

    return factory


@contextlib.contextmanager
def tool_tasks_contained() -> Iterator[None]:
    """Inside this block (a serving run), the running loop makes tasks with
    :func:`contained`; the factory it had is put back after."""
    loop = asyncio.get_running_loop()
    previous = loop.get_task_factory()
    loop.set_task_factory(contained(loop, previous))
    try:
        yield
    finally:
        loop.set_task_factory(previous)
