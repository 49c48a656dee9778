"""toolang-source-invoke: one-shot invocations — ``toolang invoke`` and ``invoke()``."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

import click

from toolang_core import GroupPolicy, RegisterTurnSource, hookimpl

if TYPE_CHECKING:
    import asyncio

    from toolang_core import Inbox
    from toolang_source_invoke.api import InvokeResult, ainvoke, invoke

__all__ = ["InvokeResult", "ainvoke", "invoke"]


def __getattr__(name: str) -> Any:  # the Python API loads the runtime only when used
    if name in __all__:
        return getattr(import_module("toolang_source_invoke.api"), name)
    raise AttributeError(f"module 'toolang_source_invoke' has no attribute {name!r}")


NAME = "source-invoke"


class InvokeSource:
    """Invocations arrive through ``toolang invoke`` or :func:`invoke`; no background loop."""

    async def run(self, inbox: Inbox, stop: asyncio.Event) -> None:
        return None


@hookimpl
def toolang_register_turn_sources(register: RegisterTurnSource) -> None:
    register(
        "invoke",
        lambda context: InvokeSource(),
        description="one-shot invocations",
        admission=GroupPolicy(priority=30),  # after chat, before background work
    )


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_source_invoke.cli import invoke_command

    cli.add_command(invoke_command)
