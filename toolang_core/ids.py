"""Identifiers: sortable, unique, safe in file paths and URLs."""

from __future__ import annotations

import os
import re
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case
_ID = re.compile(r"^[0-9a-z][0-9a-z_-]{0,127}$")


def new_id(prefix: str = "") -> str:
    """A 26-character time-ordered id (48-bit milliseconds + 80 random bits), like a ULID."""
    value = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        value, digit = divmod(value, 32)
        chars.append(_ALPHABET[digit])
    return prefix + "".join(reversed(chars))


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
