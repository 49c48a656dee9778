"""The compact JSON the stores write: separators ``,`` and ``:``, non-ASCII kept as is,
and only JSON: ``NaN`` and the infinities are refused (``ValueError``), as PostgreSQL's
``jsonb`` and every other reader of the stored text would refuse them. A NUL character
(U+0000) in a string or a key is written out as the text ``\x00``: JSON allows it, but
PostgreSQL's ``jsonb`` and ``text`` cannot hold it, and a value one store keeps and the
other refuses would make a turn's fate depend on the backend (:func:`nul_written_out`
does the same for text a store keeps in a column).

:func:`dumps` encodes a value; :func:`dumps_data` encodes a step's data, splicing in
the JSON a :class:`~toolang_core.redaction.Masked` list carries already (a turn's
prompt, whose messages were each encoded once when they were masked) instead of
encoding those messages again for every model call that repeats them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

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


_NUL: Final = "\\u0000"
"""How the encoders write a NUL character (after an unescaped backslash)."""


def nul_written_out(text: str) -> str:
    """``text`` with each NUL character written out as the four characters ``\\x00``
    (what a store keeps in a text column; a NUL ends a C string, and PostgreSQL's
    ``text`` cannot hold one)."""
    return text if "\x00" not in text else text.replace("\x00", "\\x00")


def _without_nul(encoded: str) -> str:
    """``encoded`` JSON with each NUL written out as ``\\x00`` (JSON ``"\\\\x00"``): an
    escape ``\\u0000`` is a NUL when the backslashes before it pair up (an escaped
    backslash before the text ``u0000`` is not one).

    :raises ValueError: an object's key holding a NUL is another of its keys once
        written out (``"\\x00"`` and ``"\\\\x00"``): stored, one of the two values would
        be lost."""
    at = encoded.find(_NUL)
    if at < 0:
        return encoded
    if "\\" + _NUL not in encoded:  # no backslash before any: each is a NUL
        return _distinct_keys(encoded.replace(_NUL, "\\\\x00"))
    parts: list[str] = []
    start = 0
    while at >= 0:
        before = at
        while before > 0 and encoded[before - 1] == "\\":
            before -= 1
        if (at - before) % 2 == 0:  # this backslash starts the escape: a NUL
            parts.append(encoded[start:at])
            parts.append("\\\\x00")
            start = at + len(_NUL)
            at = encoded.find(_NUL, start)
        else:
            at = encoded.find(_NUL, at + 1)
    parts.append(encoded[start:])
    return _distinct_keys("".join(parts))


def _distinct_keys(written: str) -> str:
    """``written`` (JSON whose NULs were just written out), checked: no object holds a
    key twice. Only JSON that held a NUL is read again: it is rare."""
    json.loads(written, object_pairs_hook=_one_of_each)
    return written


def _one_of_each(pairs: list[tuple[str, Any]]) -> None:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(
                f"cannot store as JSON: two keys of one object are {key!r} once a NUL is "
                "written out as \\x00 (one held a NUL, the other these characters)"
            )
        seen.add(key)


def dumps(value: object) -> str:
    """Compact JSON (non-ASCII kept as is, a NUL written out as ``\\x00``) of a value
    to store.

    :raises ValueError: for NaN, an infinity or a cycle.
    :raises TypeError: for a value of another type than JSON's."""
    if _C_ENCODE is None:
        return _without_nul(_ENCODER.encode(value))
    try:
        return _without_nul("".join(_C_ENCODE(value, 0)))
    except RecursionError:
        raise ValueError("cannot store as JSON: a circular or too deeply nested value") from None


def check(value: object, *, mappings: bool = False) -> None:
    """Whether ``value`` can be stored as the stores store it: JSON (no ``NaN``, no
    infinity, no other type) whose text is UTF-8 (no lone surrogate).
    ``mappings``: any ``Mapping`` counts as a dict (a value masked by the redaction
    policy before it is stored, which makes dicts of them).

    :raises ValueError, TypeError: naming what is not."""
    if mappings:
        encoded = json.dumps(value, default=_as_dict, allow_nan=False, ensure_ascii=False)
        _without_nul(encoded).encode()
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
        return _without_nul(data.json)
    if type(data) is not dict:
        data = dict(data)
    parts: list[str] | None = None
    plain: dict[str, Any] = {}
    for key, value in data.items():
        kind = type(value)
        known = value.json if (kind is Masked or kind is MaskedMap) and type(key) is str else None
        if known is not None:  # (a plugin's may come from json.dumps: its NULs as they are)
            known = _without_nul(known)
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
