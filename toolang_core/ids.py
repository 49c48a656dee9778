"""Identifiers: sortable, unique, safe in file paths and URLs."""

from __future__ import annotations

import base64
import os
import re
import time

# RFC 4648 base32 digits, in order, mapped to Crockford's (lower case): the encoding keeps
# byte order, so ids sort by their leading timestamp.
_CROCKFORD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "0123456789abcdefghjkmnpqrstvwxyz")
_ID = re.compile(r"^[0-9a-z][0-9a-z_-]{0,127}$")


def new_id(prefix: str = "") -> str:
    """A 26-character time-ordered id (48-bit milliseconds + 80 random bits), like a ULID."""
    raw = int(time.time() * 1000).to_bytes(6, "big") + os.urandom(10)
    return prefix + base64.b32encode(raw)[:26].decode().translate(_CROCKFORD)


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
