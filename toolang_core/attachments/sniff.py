"""The media type of an attachment, told from its bytes, never from its name.

Binary formats are told by their magic numbers through ``puremagic`` (a pure-Python
magic-number library, already what ``llm`` uses for its own attachments); a text is
bytes that decode as UTF-8 with no NUL. Anything else is
``application/octet-stream``, which no configuration accepts by default.
"""

from __future__ import annotations

from typing import Final

OCTET_STREAM: Final = "application/octet-stream"
TEXT: Final = "text/plain"

# puremagic's names for a type that has a more common one.
_CANONICAL: Final = {
    "audio/wave": "audio/wav",
    "audio/x-wav": "audio/wav",
    "audio/vnd.wave": "audio/wav",
    "audio/x-mpeg": "audio/mpeg",
    "audio/mp3": "audio/mpeg",
    "image/jpg": "image/jpeg",
    "image/pjpeg": "image/jpeg",
    "application/x-pdf": "application/pdf",
}


def sniff(data: bytes) -> str:
    """The media type of ``data``: from its magic number, else ``text/plain`` for
    UTF-8 text, else ``application/octet-stream``."""
    import puremagic  # imported when an attachment is taken: not every start pays

    head = data[:8192]
    if head:
        try:
            found: str = puremagic.from_string(head, mime=True)
        except puremagic.PureError:
            found = ""
        if found:
            return _CANONICAL.get(found, found)
    if _is_text(data):
        return TEXT
    return OCTET_STREAM


def _is_text(data: bytes) -> bool:
    if b"\x00" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def matches(media_type: str, patterns: tuple[str, ...] | frozenset[str]) -> bool:
    """Whether ``media_type`` is one of ``patterns`` (``image/png``, ``image/*``, ``*/*``)."""
    major = media_type.partition("/")[0]
    return any(p in (media_type, "*/*", "*") or p == f"{major}/*" for p in patterns)
