"""The shape of a model name, ``provider`` or ``provider/model id``, checked at the door."""

from __future__ import annotations

import re

# Segments start with a letter or digit: no empty segment, no "." or ".." (a model id
# may end up in a path or a URL of its provider).
_SPEC = re.compile(r"^[a-z][a-z0-9_-]*(/[A-Za-z0-9][A-Za-z0-9._:@+-]*)*$")
# A provider whose model is reached at an address names it by URL (a2a/http://host/x):
# an http(s) URL with no query, no fragment and no "." or ".." path segment.
_URL_SPEC = re.compile(
    r"^[a-z][a-z0-9_-]*/https?://[A-Za-z0-9._~@:+-]+(?P<path>(/[A-Za-z0-9._~@:+%-]*)*)$"
)
MAX_LENGTH = 200


def model_spec_problem(spec: str) -> str | None:
    """What is wrong with ``spec`` as a model name, or ``None`` when it is well formed."""
    if len(spec) <= MAX_LENGTH:
        if _SPEC.match(spec):
            return None
        url = _URL_SPEC.match(spec)
        if url and not {".", ".."} & set(url["path"].split("/")):
            return None
    return (
        f"expected a model name 'provider' or 'provider/model-id' (letters, digits and "
        f"._:@+- in each '/'-separated part, no '.' or '..' parts, or an http(s) URL as the "
        f"model id, at most {MAX_LENGTH} characters), found {spec[:60]!r}"
    )
