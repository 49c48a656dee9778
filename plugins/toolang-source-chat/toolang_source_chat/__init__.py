"""toolang-source-chat: the chat turn source and the ``toolang chat`` command."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import click

from toolang_core import GroupPolicy, RegisterSettings, RegisterTurnSource, hookimpl

if TYPE_CHECKING:
    import asyncio

    from toolang_core import Inbox

NAME = "source-chat"


@attrs.frozen
class ChatSettings:
    """``[plugins.source-chat]``."""

    default_thread: str = "default"
    wait_seconds: float = 300.0


class ChatSource:
    """Chat requests arrive through ``toolang chat`` or the Python API, straight into the
    inbox; this source has no background loop of its own."""

    async def run(self, inbox: Inbox, stop: asyncio.Event) -> None:
        return None


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(ChatSettings)


@hookimpl
def toolang_register_turn_sources(register: RegisterTurnSource) -> None:
    register(
        "chat",
        lambda context: ChatSource(),
        description="people talking to agents",
        admission=GroupPolicy(priority=40),  # a person waits: before everything else
    )


@hookimpl
def toolang_register_commands(cli: click.Group) -> None:
    from toolang_source_chat.cli import chat

    cli.add_command(chat)
