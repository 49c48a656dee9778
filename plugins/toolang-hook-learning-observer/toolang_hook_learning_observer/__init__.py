"""toolang-hook-learning-observer: the LearningObserver stage of the tool-call chain.

Records the outcome of every executed tool call in the plugin's own SQLite tables (a
call the chain refused — blocked, denied, out of scope, bad parameters — never ran and
is not counted),
reports failure rates and latency (``toolang learning stats``) and gives each agent a
short note about its tools' recent failures. This module stays import-light (it is
imported by every ``toolang`` command): the database code loads on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core import hookimpl
from toolang_hook_learning_observer.settings import NAME, LearningSettings

if TYPE_CHECKING:
    import click

    from toolang_core import RegisterSettings, RuntimeView, ToolCall, ToolCallContext, ToolResult
    from toolang_hook_learning_observer.recorder import Recorder

__all__ = ["NAME", "LearningSettings", "recorder_of"]


def _new_recorder(runtime: RuntimeView) -> Recorder:
    from toolang_hook_learning_observer.recorder import Recorder, settings_of

    return Recorder(runtime, settings_of(runtime))


def recorder_of(runtime: RuntimeView) -> Recorder:
    """This runtime's :class:`~toolang_hook_learning_observer.recorder.Recorder`."""
    return runtime.plugin_state(NAME, lambda: _new_recorder(runtime))


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(LearningSettings)


@hookimpl
def toolang_observe_tool_result(call: ToolCall, result: ToolResult, ctx: ToolCallContext) -> None:
    if getattr(result, "refusal", None) is not None:  # ill-typed results are recorded too
        # Refused by the chain (blocked, denied, out of scope, bad parameters): the tool
        # never ran, so it is no outcome of the tool — its failure rate stays its own.
        return
    recorder_of(ctx.runtime).observe(call, result, ctx)


@hookimpl
def toolang_prompt_notes(agent: str, thread_id: str, runtime: RuntimeView) -> str | None:
    return recorder_of(runtime).note(agent)


@hookimpl
def toolang_startup(runtime: RuntimeView) -> None:
    recorder_of(runtime).prune()


@hookimpl
def toolang_shutdown(runtime: RuntimeView, reason: str) -> None:
    recorder_of(runtime).writer.flush()


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_hook_learning_observer.cli import learning

    cli.add_command(learning)
