"""toolang-hook-learning-observer: the LearningObserver stage of the tool-call chain.

Records the outcome of every executed tool call in the plugin's own SQLite tables,
reports failure rates and latency (``toolang learning stats``) and gives each agent a
short note about its tools' recent failures. This module stays import-light (it is
imported by every ``toolang`` command): the database code loads on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolang_core import hookimpl
from toolang_hook_learning_observer.settings import NAME, LearningSettings

if TYPE_CHECKING:
    import click

    from toolang_core import RegisterSettings, Runtime, ToolCall, ToolCallContext, ToolResult
    from toolang_hook_learning_observer.recorder import Recorder

__all__ = ["NAME", "LearningSettings", "recorder_of"]


def _new_recorder(runtime: Runtime) -> Recorder:
    from toolang_hook_learning_observer.recorder import Recorder, settings_of

    return Recorder(runtime, settings_of(runtime))


def recorder_of(runtime: Runtime) -> Recorder:
    """This runtime's :class:`~toolang_hook_learning_observer.recorder.Recorder`."""
    return runtime.plugin_state(NAME, lambda: _new_recorder(runtime))


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(LearningSettings)


@hookimpl
def toolang_observe_tool_result(call: ToolCall, result: ToolResult, ctx: ToolCallContext) -> None:
    runtime: Any = getattr(ctx, "runtime", None)
    if runtime is None:  # a context built by hand (unit tests): nowhere to record
        return
    recorder_of(runtime).observe(call, result, ctx)


@hookimpl
def toolang_prompt_notes(agent: str, thread_id: str, runtime: Runtime) -> str | None:
    return recorder_of(runtime).note(agent)


@hookimpl
def toolang_startup(runtime: Runtime) -> None:
    recorder_of(runtime).prune()


@hookimpl
def toolang_shutdown(runtime: Runtime, reason: str) -> None:
    recorder_of(runtime).writer.flush()


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_hook_learning_observer.cli import learning

    cli.add_command(learning)
