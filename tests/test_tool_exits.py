"""A tool that calls sys.exit() (argparse on bad arguments, a click command run
standalone) fails its own call: the runtime goes on serving every other turn."""

from __future__ import annotations

import asyncio

import pytest

from toolang_core import NewTurnRequest, Tool, hookimpl
from toolang_core.store.types import TurnStatus
from toolang_core.testing.models import ScriptedModel, text, tool_call


def two_turns(toolang_runtime, model, first_input, **plugins):
    """A runtime with ``plugins`` and ``model`` serves a turn of ``first_input``, then
    another on a thread of its own: ``(runtime, inbox, the first's id, the second's id)``."""
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n', plugins={**plugins, "scripted": model.plugin()}
    )
    inbox = runtime.open_inbox()
    first = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:a", input=first_input)).id
    second = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:b", input="hi")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    return runtime, inbox, first, second


class Exits:
    @hookimpl
    def toolang_register_tools(self, register):
        def parse(args: str) -> str:
            """Parse command-line arguments.

            :param args: the arguments
            """
            raise SystemExit(2)

        register(Tool.from_function(parse))  # blocking: in a worker thread


def test_a_turn_whose_tool_exits_completes_and_the_next_turn_runs(toolang_runtime):
    model = ScriptedModel(
        [tool_call("parse", {"args": "--bad"}), text("it could not parse that"), text("hello")]
    )
    _, inbox, first, second = two_turns(toolang_runtime, model, "parse --bad", exits=Exits())
    assert inbox.get(first).status is TurnStatus.COMPLETED
    assert inbox.get(second).status is TurnStatus.COMPLETED
    (call,) = [s for s in inbox.store.steps(first) if s.kind == "tool_call"]
    result = call.data["result"]
    assert (result["ok"], result["error_type"]) == (False, "SystemExit")
    inbox.store.close()


class ExitingFilter:
    """A plugin whose hook calls sys.exit() (a library that exits on bad input)."""

    @hookimpl
    def toolang_register_tools(self, register):
        def ping() -> str:
            """Ping."""
            return "pong"

        register(Tool.from_function(ping))

    @hookimpl
    def toolang_filter_tool_call(self, call, ctx):
        raise SystemExit(3)


def test_a_hook_that_exits_fails_as_that_plugin_and_the_runtime_goes_on(toolang_runtime):
    model = ScriptedModel([tool_call("ping", {}), text("could not ping"), text("hello")])
    _, inbox, first, second = two_turns(toolang_runtime, model, "ping", exiting=ExitingFilter())
    assert inbox.get(first).status is TurnStatus.COMPLETED
    assert inbox.get(second).status is TurnStatus.COMPLETED
    (call,) = [s for s in inbox.store.steps(first) if s.kind == "tool_call"]
    # the filter is fail-closed: its failure refuses the call, naming the plugin
    assert call.data["result"]["ok"] is False
    assert "exiting" in str(call.data["chain"]) and "SystemExit" in str(call.data["chain"])
    inbox.store.close()


def test_a_model_that_exits_fails_its_turn_and_the_next_turn_runs(toolang_runtime):
    def answer(request):
        if request.messages[-1].content == "exit":
            raise SystemExit(6)
        return text("hello")

    model = ScriptedModel(answer)
    _, inbox, first, second = two_turns(toolang_runtime, model, "exit")
    turn = inbox.get(first)
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert "SystemExit: 6" in turn.error
    assert inbox.get(second).status is TurnStatus.COMPLETED
    inbox.store.close()


class ExitsLater:
    """A tool that starts a task of its own which calls sys.exit() after the call
    returned (a library's background job exiting on bad input)."""

    def __init__(self) -> None:
        self.tasks: list[asyncio.Task[None]] = []

    @hookimpl
    def toolang_register_tools(self, register):
        async def later() -> None:
            await asyncio.sleep(0)
            raise SystemExit(4)

        async def start(kind: str) -> str:
            """Start a background job.

            :param kind: which
            """
            self.tasks.append(asyncio.get_running_loop().create_task(later()))
            if kind == "gathered":  # a task of the task: still the tool's
                self.tasks.append(asyncio.ensure_future(asyncio.gather(later())))
            return "started"

        register(Tool.from_function(start))


@pytest.mark.parametrize("kind", ["task", "gathered"])
def test_a_task_a_tool_started_that_exits_fails_alone_and_the_runtime_goes_on(
    toolang_runtime, kind
):
    """asyncio re-raises a task's SystemExit out of the event loop, which ended the
    runtime and every turn in it: a task started inside a tool call fails with a
    ``RuntimeError`` naming the tool instead."""
    model = ScriptedModel(
        [tool_call("start", {"kind": kind}), text("started it"), text("hello"), text("again")]
    )
    plugin = ExitsLater()
    runtime, inbox, first, second = two_turns(toolang_runtime, model, "go", exits=plugin)
    assert inbox.get(first).status is TurnStatus.COMPLETED
    assert inbox.get(second).status is TurnStatus.COMPLETED
    for task in plugin.tasks:
        assert task.done() and isinstance(task.exception(), RuntimeError)
        assert "a task tool 'start' started called sys.exit(4)" in str(task.exception())
    # the runtime serves again: the loop's task factory is the one it found
    third = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:c", input="hi")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    assert inbox.get(third).status is TurnStatus.COMPLETED
    inbox.store.close()


def test_runs_sharing_a_loop_keep_the_factory_until_the_last_ends():
    """Two runtimes serving on one loop end in either order: the tasks a tool starts
    stay contained until the last run ends, and the loop then gets back the factory it
    had (before, the first run to end put back what it had found)."""
    from toolang_core.tools.task_exits import running, tool_tasks_contained

    made = []

    def theirs(loop, coro, **kwargs):  # a factory the application set before
        made.append(coro)
        return asyncio.Task(coro, loop=loop, **kwargs)

    async def exits():
        raise SystemExit(5)

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_task_factory(theirs)
        first, second = tool_tasks_contained(), tool_tasks_contained()
        first.__enter__()
        second.__enter__()
        first.__exit__(None, None, None)  # the first run ends while the second serves
        with running("start"):
            task = loop.create_task(exits())
        with pytest.raises(RuntimeError, match=r"a task tool 'start' started called sys\.exit"):
            await task
        second.__exit__(None, None, None)
        assert loop.get_task_factory() is theirs
        assert len(made) == 1  # the application's factory made the task
        # a factory set while one run serves is wrapped by the next run to start
        third, fourth = tool_tasks_contained(), tool_tasks_contained()
        third.__enter__()
        loop.set_task_factory(theirs)
        fourth.__enter__()
        with running("start"):
            task = loop.create_task(exits())
        with pytest.raises(RuntimeError, match=r"a task tool 'start' started"):
            await task
        fourth.__exit__(None, None, None)
        third.__exit__(None, None, None)
        assert loop.get_task_factory() is theirs

    asyncio.run(main())
