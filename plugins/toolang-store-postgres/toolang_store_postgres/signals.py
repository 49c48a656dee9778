"""Turn signals between the runtimes of one schema, over ``NOTIFY``.

The store carries :class:`toolang_core.TurnSignal` batches on a channel of their own,
``toolang_<schema>_turns``, beside the wake-up channel: the scheduler's listener (one
session) listens on both, and text streaming to another node's watchers never wakes a
scheduler. A notification's payload is at most 8,000 bytes, so a batch is cut into
payloads below ``PAYLOAD_BYTES`` (a long text into several ``text`` signals, each with
its offset). Each payload carries a sequence number: PostgreSQL folds identical
payloads sent in one transaction into one, and two equal text parts are not one.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence
from typing import Any, Final

import structlog

from toolang_core import TurnSignal

log = structlog.get_logger("toolang.store.postgres")

PAYLOAD_BYTES: Final = 7000
TEXT_CHARS: Final = 1500
"""At most this many characters of text a signal (4 bytes each at worst, JSON-escaped
a little more: well under the payload's bytes)."""
KINDS: Final = frozenset({"watch", "text", "finished"})

SEND_SQL: Final = (
    "SELECT pg_notify(%s, p) FROM unnest(%s::text[]) WITH ORDINALITY AS t(p, i) ORDER BY i"
)

_sequence = itertools.count()


def _pieces(signals: Sequence[TurnSignal]) -> Iterator[list[Any]]:
    for signal in signals:
        if signal.kind != "text" or len(signal.text) <= TEXT_CHARS:
            yield [signal.kind, signal.turn_id, signal.call, signal.at, signal.text]
            continue
        for start in range(0, len(signal.text), TEXT_CHARS):
            part = signal.text[start : start + TEXT_CHARS]
            yield ["text", signal.turn_id, signal.call, signal.at + start, part]


def encode(sender: str, signals: Sequence[TurnSignal]) -> list[str]:
    """The payloads carrying ``signals`` from ``sender``, in order."""
    payloads: list[str] = []
    batch: list[list[Any]] = []
    size = 0
    for piece in _pieces(signals):
        length = len(json.dumps(piece, ensure_ascii=False).encode())
        if batch and size + length > PAYLOAD_BYTES:
            payloads.append(_payload(sender, batch))
            batch, size = [], 0
        batch.append(piece)
        size += length + 1
    if batch:
        payloads.append(_payload(sender, batch))
    return payloads


def _payload(sender: str, batch: list[list[Any]]) -> str:
    return json.dumps(
        {"n": sender, "q": next(_sequence), "s": batch}, ensure_ascii=False, separators=(",", ":")
    )


def decode(payload: str) -> tuple[str, list[TurnSignal]] | None:
    """``(sender, signals)`` of a payload; ``None`` (logged) when it is not one."""
    try:
        data = json.loads(payload)
        sender = str(data["n"])
        signals = [
            TurnSignal(kind, str(turn), str(call), int(at), str(text))
            for kind, turn, call, at, text in data["s"]
            if kind in KINDS
        ]
    except (ValueError, TypeError, KeyError) as exc:
        log.warning("store.turn_signal_unreadable", error=type(exc).__name__)
        return None
    return sender, signals
