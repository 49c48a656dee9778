"""The compact JSON the stores write: separators ``,`` and ``:``, non-ASCII kept as is,
and only JSON: ``NaN`` and the infinities are refused (``ValueError``), as PostgreSQL's
``jsonb`` and every other reader of the stored text would refuse them. So is a NUL
character (U+0000) in a string or a key: JSON allows it, but PostgreSQL's ``jsonb`` and
``text`` cannot hold it, and a value one store keeps and the other refuses would make a
turn's fate depend on the backend.

:func:`dumps` encodes a value; :func:`dumps_data` encodes a step's data, splicing in
the JSON a :class:`~toolang_core.redaction.Masked` list carries already (a turn's
prompt, whose messages were each encoded once when they were masked) instead of
encoding those messages again for every model call that repeats them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from toolang_core.redaction import Masked, MaskedMap


def _not_serializable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_MAKE_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)  # absent on some Pythons
_C_ENCODE = (
    None
    if _MAKE_C_ENCODER is None
    else _MAKE_C_ENCODER(
        None, _not_serializable, json.encoder.encode_basestring, None, ":", ",", False, False, False
    )
)
"""The C encoder ``JSONEncoder.encode`` builds anew on every call, built once (half the
cost of encoding a step's data). Without circular-reference markers: a cycle ends in
``RecursionError``, reported as ``ValueError`` below."""


_NUL_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
"""``\\u0000`` in encoded JSON that is a NUL, not an escaped backslash before ``u0000``."""

NUL_REFUSED = "holds a NUL character (U+0000), which no store keeps (PostgreSQL cannot)"


def without_nul(encoded: str) -> str:
    """``encoded`` JSON, checked to hold no NUL character (the encoders write it
    ``\\u0000``; an escaped backslash before ``u0000`` is not one).

    :raises ValueError: :data:`NUL_REFUSED`."""
    if "\\u0000" in encoded and _NUL_ESCAPE.search(encoded):
        raise ValueError(NUL_REFUSED)
    return encoded


def dumps(value: object) -> str:
    """Compact JSON (non-ASCII kept as is) of a value to store.

    :raises ValueError: for NaN, an infinity, a NUL character or a cycle.
    :raises TypeError: for a value of another type than JSON's."""
    if _C_ENCODE is None:
        return without_nul(_ENCODER.encode(value))
    try:
        return without_nul("".join(_C_ENCODE(value, 0)))
    except RecursionError:
        raise ValueError("cannot store as JSON: a circular or too deeply nested value") from None


def check(value: object, *, mappings: bool = False) -> None:
    """Whether ``value`` can be stored as the stores store it: JSON (no ``NaN``, no
    infinity, no NUL character, no other type) whose text is UTF-8 (no lone surrogate).
    ``mappings``: any ``Mapping`` counts as a dict (a value masked by the redaction
    policy before it is stored, which makes dicts of them).

    :raises ValueError, TypeError: naming what is not."""
    if mappings:
        without_nul(
            json.dumps(value, default=_as_dict, allow_nan=False, ensure_ascii=False)
        ).encode()
    else:
        dumps(value).encode()


def _as_dict(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    return _not_serializable(value)


def dumps_data(data: Mapping[str, Any]) -> str:
    """:func:`dumps` of a step's data, the same text, with the JSON its top-level
    :class:`Masked` and :class:`MaskedMap` values carry (their ``json``) spliced in
    rather than encoded; a :class:`MaskedMap` carrying its own JSON is that JSON."""
    if type(data) is MaskedMap and data.json is not None:
        return data.json
    if type(data) is not dict:
        data = dict(data)
    parts: list[str] | None = None
    plain: dict[str, Any] = {}
    for key, value in data.items():
        kind = type(value)
        known = value.json if (kind is Masked or kind is MaskedMap) and type(key) is str else None
        if known is None:
            plain[key] = value
            continue
        if parts is None:
            parts = []
        if plain:
            parts.append(dumps(plain)[1:-1])
            plain = {}
        parts.append(f"{dumps(key)}:{known}")
    if parts is None:
        return dumps(data)
    if plain:
        parts.append(dumps(plain)[1:-1])
    return "{" + ",".join(parts) + "}"
