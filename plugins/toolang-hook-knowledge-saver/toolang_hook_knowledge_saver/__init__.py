"""toolang-hook-knowledge-saver: the KnowledgeSaver stage of the tool-call chain.

Keeps the tool results its rules find worth remembering — once per agent, secrets
masked — and lists them (``toolang knowledge list|show``). This module stays
import-light (it is imported by every ``toolang`` command): the rest loads on first use.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from toolang_core import hookimpl
from toolang_hook_knowledge_saver.settings import NAME, KnowledgeSettings

if TYPE_CHECKING:
    import click

    from toolang_core import RegisterSettings, RuntimeView, ToolCall, ToolCallContext, ToolResult
    from toolang_hook_knowledge_saver.keeper import Keeper

__all__ = ["NAME", "KnowledgeSettings", "keeper_of"]


def _new_keeper(runtime: RuntimeView) -> Keeper:
    from toolang_hook_knowledge_saver.keeper import Keeper, settings_of

    return Keeper(runtime, settings_of(runtime))


def keeper_of(runtime: RuntimeView) -> Keeper:
    """This runtime's :class:`~toolang_hook_knowledge_saver.keeper.Keeper`."""
    return runtime.plugin_state(NAME, lambda: _new_keeper(runtime))


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(KnowledgeSettings)


@hookimpl
def toolang_save_knowledge(
    call: ToolCall, result: ToolResult, ctx: ToolCallContext
) -> Awaitable[None] | None:
    runtime = ctx.runtime
    entry = keeper_of(runtime).rules.entry_for(call, result, ctx, now=runtime.clock())
    if entry is None:
        return None
    from toolang_hook_knowledge_saver.keeper import remember

    return remember(runtime, entry)


@hookimpl
def toolang_shutdown(runtime: RuntimeView, reason: str) -> None:
    keeper_of(runtime).writer.flush()


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_hook_knowledge_saver.cli import knowledge

    cli.add_command(knowledge)
