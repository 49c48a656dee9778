"""Counting a prompt's tokens, for the token budget of ``[agents] context_tokens``.

A model that can count its own tokens says so with a method ``count_tokens(text: str)
-> int`` (optional, found with ``getattr`` like ``stream``): its count is used. Any
other model's text is estimated — a token per three bytes of UTF-8, rounded up, and
:data:`MESSAGE_TOKENS` per message for its role and framing. English text runs about
four characters a token and CJK text about one character, so the estimate errs high
by about a quarter for English and is near the mark for CJK: a budget it keeps is kept
by the model's own count too, in all but unusual text (long runs of digits or symbols).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final, Literal

from toolang_core.models.types import Message

BYTES_PER_TOKEN: Final = 3
MESSAGE_TOKENS: Final = 4
"""Tokens counted for each message besides its text (its role, the provider's framing)."""

CountedBy = Literal["model", "estimate"]


def estimate_tokens(text: str) -> int:
    """The estimated token count of ``text`` (see the module docstring)."""
    size = len(text) if text.isascii() else len(text.encode("utf-8"))
    return -(-size // BYTES_PER_TOKEN)


class TokenCounter:
    """Counts text and messages for one model: with its ``count_tokens`` if it has
    one (``by == "model"``), else with :func:`estimate_tokens` (``by == "estimate"``)."""

    __slots__ = ("_count", "by")

    def __init__(self, model: object) -> None:
        count = getattr(model, "count_tokens", None)
        self.by: CountedBy = "model" if callable(count) else "estimate"
        self._count: Callable[[str], int] = count if callable(count) else estimate_tokens

    def text(self, text: str) -> int:
        """Tokens of ``text`` alone."""
        return int(self._count(text)) if text else 0

    def message(self, message: Message) -> int:
        """Tokens of one message: its text, its tool calls' names and parameters, and
        :data:`MESSAGE_TOKENS`."""
        tokens = self.text(message.content) + MESSAGE_TOKENS
        for call in message.tool_calls:
            tokens += self.text(call.name) + self.text(str(call.params))
        return tokens

    def messages(self, messages: Iterable[Message]) -> int:
        """Tokens of ``messages`` together."""
        return sum(self.message(m) for m in messages)
