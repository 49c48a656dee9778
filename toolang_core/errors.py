"""Errors meant for people.

Every error toolang raises on bad input derives from :class:`ToolangError`. Its
message is complete on one line: what happened, where (file, key, plugin, hook, id),
what was expected and what to do. The CLI prints the message and exits with
``exit_code``; it never shows a traceback for a ``ToolangError``.
"""

from __future__ import annotations

from typing import ClassVar


class ToolangError(Exception):
    """Base class of every error toolang reports to a person."""

    exit_code: ClassVar[int] = 1

    @property
    def message(self) -> str:
        return str(self)


class ConfigError(ToolangError):
    """The configuration file (or a plugin's section of it) is invalid.

    ``problems`` holds one line per mistake, each naming the file and the key path.
    """

    exit_code: ClassVar[int] = 2

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class PluginError(ToolangError):
    """A plugin failed to import, register or run, and strict mode is on.

    The message names the distribution, its version, the entry point and, when one
    is involved, the hook.
    """

    exit_code: ClassVar[int] = 3


class UsageError(ToolangError):
    """A command was asked to do something that cannot be done as asked."""

    exit_code: ClassVar[int] = 2


def describe_exception(exc: BaseException) -> str:
    """One line naming an exception: its type and the first line of its message.

    Used wherever a failure is recorded or logged for a person (a plugin's hook, a
    tool, a turn); it lives here, at the bottom of the package graph, so every layer
    can use it without importing the plugin host."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
