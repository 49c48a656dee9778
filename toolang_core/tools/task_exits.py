"""Tasks a tool starts may not end the runtime.

A tool's own ``sys.exit()`` fails its call (:mod:`toolang_core.tools.chain`). A task the
tool starts (``create_task``, ``ensure_future``, ``gather``) runs on after the call
returned, and asyncio re-raises a task's ``SystemExit`` out of the event loop, which
ends the runtime and every turn in it. So while a tool's function runs, the tool's
name is in the context (:func:`running`) — and every task started from there copies
that context — and a serving runtime's event loop makes such tasks through its task
factory (:func:`tool_tasks_contained`): their ``SystemExit`` becomes a ``RuntimeError``
naming the tool, the task's own failure. Other tasks are made as before (the check is
one context lookup).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import weakref
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


def _factory(previous: TaskFactory | None) -> TaskFactory:
    """A task factory that makes tasks as ``previous`` did (or as asyncio does), a task
    started inside a tool call wrapped in :func:`_contained`."""

    def factory(
        loop: asyncio.AbstractEventLoop,
        coro: Coroutine[Any, Any, Any] | Generator[Any, None, Any],
        context: contextvars.Context | None = None,
        **kwargs: Any,
    ) -> asyncio.Future[Any]:
        tool = _TOOL.get() if context is None else context.get(_TOOL)
        inner = None
        if tool is not None and asyncio.iscoroutine(coro):
            inner = coro
            wrapped = _contained(inner, tool)
            name = getattr(inner, "__qualname__", None)  # (a native coroutine's)
            if isinstance(name, str):  # its repr names the tool's coroutine
                wrapped.__qualname__ = name  # type: ignore[attr-defined]
            coro = wrapped
        if context is not None:
            kwargs["context"] = context
        task: asyncio.Future[Any]
        if previous is not None:
            task = previous(loop, coro, **kwargs)
        else:
            task = asyncio.Task(coro, loop=loop, **kwargs)
        if inner is not None:  # cancelled before it ran: no "never awaited" warning
            task.add_done_callback(lambda _: inner.close())
        return task

    return factory


_INSTALLED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Any]] = (
    weakref.WeakKeyDictionary()
)
"""Per loop: how many runs are inside :func:`tool_tasks_contained`, its factory, and
the factory that one wraps."""


@contextlib.contextmanager
def tool_tasks_contained() -> Iterator[None]:
    """Inside this block (a serving run), the running loop makes tasks through
    :func:`_factory`. Runs sharing a loop share it, in whatever order they end: the
    factory it wraps is put back when the last ends. A run that finds another factory
    set meanwhile wraps that one."""
    loop = asyncio.get_running_loop()
    installed = _INSTALLED.get(loop)
    if installed is None:
        installed = _INSTALLED[loop] = [0, None, None]
    current = loop.get_task_factory()
    if installed[1] is None or current is not installed[1]:
        installed[1], installed[2] = _factory(current), current
        loop.set_task_factory(installed[1])
    installed[0] += 1
    try:
        yield
    finally:
        installed[0] -= 1
        if installed[0] == 0:
            del _INSTALLED[loop]
            if loop.get_task_factory() is installed[1]:  # not replaced meanwhile
                loop.set_task_factory(installed[2])
