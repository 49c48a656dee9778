"""Which tool results are worth keeping, and the entry kept for one.

The cheap checks (tool prefix, success) come first; the result is turned into text
and matched only when they pass, and masked only when it is kept, so most calls cost
a few attribute reads.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final

import attrs

from toolang_core import redact, redact_text
from toolang_hook_knowledge_saver.settings import KnowledgeSettings, compile_patterns

PARAMS_CHARS: Final = 300
MAX_DEPTH: Final = 32
"""Results nested deeper are measured by building their text."""


@attrs.frozen
class KnowledgeEntry:
    """One tool result worth keeping, secrets already masked."""

    agent: str
    tool: str
    params: str
    content: str
    content_chars: int
    content_hash: str
    thread_id: str
    turn_id: str
    call_id: str
    at: float
    owner: str | None = None
    """The owner of the turn: what it taught goes into that owner's memory only."""

    def row(self) -> tuple[Any, ...]:
        """The values of :data:`~toolang_hook_knowledge_saver.schema.COLUMNS`."""
        return (
            self.agent,
            self.tool,
            self.params,
            self.content,
            self.content_chars,
            self.content_hash,
            self.thread_id,
            self.turn_id,
            self.call_id,
            self.at,
            self.at,
        )


_JSON: Final = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str)
"""``json.dumps`` with these options would build an encoder on every call."""


def as_text(value: Any) -> str:
    """A result as text: strings as they are, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if type(value) is int:  # the common scalar: its JSON is its str, without the encoder
        return str(value)
    try:
        return _JSON.encode(value)
    except (TypeError, ValueError):  # e.g. a circular structure, masked only so deep
        return redact_text(str(value))


def shorter_than(value: Any, limit: int) -> bool:
    """Whether :func:`as_text` of ``value`` is surely shorter than ``limit`` characters,
    told without building the text.

    Most results are too short to keep, and serialising one costs more than the rest of
    the stage. ``False`` when unsure: a string JSON would escape, a value it would
    convert (the caller then builds the text and measures it).
    """
    if value is None:
        return limit > 0
    if isinstance(value, str):
        return len(value) < limit
    return _room_after(value, limit - 1) >= 0


def _room_after(value: Any, room: int, depth: int = 0) -> int:
    """``room`` less the length of ``value``'s compact JSON; negative when that does not
    fit or cannot be told cheaply. Stops as soon as ``room`` runs out."""
    kind = type(value)
    if kind is str:
        if len(value) + 2 > room or '"' in value or "\\" in value or not value.isprintable():
            return -1  # printable: no control character, so nothing is escaped
        return room - len(value) - 2
    if kind is dict:
        if depth == MAX_DEPTH:
            return -1
        room -= 4 * len(value) if value else 2  # {}, and ": " and ", " per item
        for key, item in value.items():
            if room < 0 or type(key) is not str:
                return -1
            room = _room_after(item, _room_after(key, room), depth + 1)
        return room
    if kind is list or kind is tuple:
        if depth == MAX_DEPTH:
            return -1
        room -= 2 * len(value) if value else 2  # [], and ", " per item
        for item in value:
            if room < 0:
                return -1
            room = _room_after(item, room, depth + 1)
        return room
    return _room_after_scalar(value, room)


def _room_after_scalar(value: Any, room: int) -> int:
    kind = type(value)
    if kind is bool:
        return room - (4 if value else 5)
    if kind is int:
        return room - len(str(value)) if value.bit_length() < 64 else -1
    if kind is float:
        return room - len(repr(value)) if math.isfinite(value) else -1
    return room - 4 if value is None else -1


def masked_text(value: Any) -> str:
    """``value`` as text with secrets masked by ``toolang_core.redact``.

    A value redact cannot rebuild (e.g. a named tuple) is masked as text instead.
    """
    try:
        return as_text(redact(value))
    except Exception:
        return redact_text(as_text(value))


def params_summary(params: Any) -> str:
    """The call's parameters as short JSON, secrets masked (``{}`` when there are none)."""
    return _cut(masked_text(dict(params) if isinstance(params, Mapping) else {}), PARAMS_CHARS)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _label(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


@attrs.frozen
class Rules:
    """The compiled form of :class:`KnowledgeSettings` (built once per runtime)."""

    tool_prefixes: tuple[str, ...]
    min_chars: int
    max_chars: int
    include: tuple[re.Pattern[str], ...]
    exclude: tuple[re.Pattern[str], ...]
    only_successful: bool

    @classmethod
    def from_settings(cls, settings: KnowledgeSettings) -> Rules:
        return cls(
            tool_prefixes=settings.tool_prefixes,
            min_chars=settings.min_chars,
            max_chars=settings.max_chars,
            include=compile_patterns("include", settings.include),
            exclude=compile_patterns("exclude", settings.exclude),
            only_successful=settings.only_successful,
        )

    def considers(self, tool: str, ok: bool) -> bool:
        """The cheap part: the tool is one to watch and the outcome one to keep."""
        if self.only_successful and not ok:
            return False
        return not self.tool_prefixes or tool.startswith(self.tool_prefixes)

    def keeps(self, text: str) -> bool:
        """The text is long enough, matches an ``include`` (if any) and no ``exclude``."""
        if len(text) < self.min_chars:
            return False
        if self.include and not any(p.search(text) for p in self.include):
            return False
        return not any(p.search(text) for p in self.exclude)

    def entry_for(self, call: Any, result: Any, ctx: Any, *, now: float) -> KnowledgeEntry | None:
        """The entry to keep for this call, or ``None``. Never raises on odd values."""
        tool = _label(getattr(call, "name", None), "?")
        ok = getattr(result, "ok", False) is True
        if not self.considers(tool, ok):
            return None
        raw = getattr(result, "output", None) if ok else getattr(result, "error", None)
        # Judge the text as the tool returned it; mask (which costs time per character)
        # only what is kept.
        if shorter_than(raw, self.min_chars) or not self.keeps(as_text(raw)):
            return None
        text = masked_text(raw)
        return KnowledgeEntry(
            agent=_label(getattr(ctx, "agent", None), "?"),
            tool=tool,
            params=params_summary(getattr(call, "params", None)),
            content=_cut(text, self.max_chars),
            content_chars=len(text),
            content_hash=hashlib.sha256(text.encode("utf-8", "replace")).hexdigest(),
            thread_id=_label(getattr(ctx, "thread_id", None)),
            turn_id=_label(getattr(ctx, "turn_id", None)),
            call_id=_label(getattr(call, "call_id", None)),
            at=now,
            owner=_owner(ctx),
        )


def _owner(ctx: object) -> str | None:
    turn = getattr(ctx, "turn", None)
    request = getattr(turn, "request", None)
    owner = getattr(request, "owner", None)
    return owner if isinstance(owner, str) else None
