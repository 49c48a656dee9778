"""Identifiers: sortable, unique, safe in file paths and URLs."""

from __future__ import annotations

import os
import re
import time

# Crockford's base32 digits (lower case), in order: the encoding keeps bit order, so ids
# sort by their leading timestamp. Two digits (10 bits) at a time, from a table: ids are
# made once per turn request and step, and base64.b32encode is pure Python.
_DIGITS = "0123456789abcdefghjkmnpqrstvwxyz"
_PAIRS = tuple(a + b for a in _DIGITS for b in _DIGITS)
_ID = re.compile(r"^[0-9a-z][0-9a-z_-]{0,127}$")


def new_id(prefix: str = "") -> str:
    """A 26-character time-ordered id (48-bit milliseconds + 80 random bits), like a ULID."""
    b = (int(time.time() * 1000) << 80 | int.from_bytes(os.urandom(10), "big")) << 2
    p = _PAIRS  # 13 pairs of digits, spelled out: a loop or a join costs twice as much
    return (
        f"{prefix}{p[b >> 120]}{p[b >> 110 & 1023]}{p[b >> 100 & 1023]}{p[b >> 90 & 1023]}"
        f"{p[b >> 80 & 1023]}{p[b >> 70 & 1023]}{p[b >> 60 & 1023]}{p[b >> 50 & 1023]}"
        f"{p[b >> 40 & 1023]}{p[b >> 30 & 1023]}{p[b >> 20 & 1023]}{p[b >> 10 & 1023]}"
        f"{p[b & 1023]}"
    )


def is_valid_id(value: str) -> bool:
    """Whether ``value`` is safe to use as an id (and so in a file name or URL)."""
    return bool(_ID.match(value))


def check_id(value: str, what: str = "id") -> str:
    """Return ``value`` if it is a valid id; raise ``ValueError`` naming ``what`` otherwise."""
    if not isinstance(value, str) or not is_valid_id(value):
        raise ValueError(
            f"invalid {what} {value!r}: use lowercase letters, digits, '_' and '-' "
            "(at most 128 characters, starting with a letter or digit)"
        )
    return value
