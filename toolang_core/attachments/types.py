"""What a turn request and a model see of an attachment.

An attachment's bytes are kept once by their SHA-256 in the attachment store
(:mod:`toolang_core.attachments.store`); what travels — in a turn request's ``meta``,
in a step, over the wire — is only its :class:`AttachmentRef`: hash, media type, name
and size. A model is handed an :class:`Attachment`: the reference and the file its
bytes are in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

import attrs

from toolang_core.errors import ToolangError

META_KEY: Final = "attachments"
"""The key of a turn request's ``meta`` that holds its attachments' references."""

_SHA256: Final = re.compile(r"[0-9a-f]{64}")


class AttachmentError(ToolangError):
    """An attachment cannot be taken or given as asked: a wrong type, too large, an
    unreadable file, a hash that is not one. The message names the file or field and
    what was expected."""

    exit_code: ClassVar[int] = 2


class AttachmentNotFound(AttachmentError):
    """No attachment of that hash is the asker's (it does not exist, or it is another
    owner's: the message never says which)."""

    exit_code: ClassVar[int] = 4


def check_sha256(value: object, *, where: str = "sha256") -> str:
    """``value`` if it is a SHA-256 as the store names its files (64 lowercase hex
    digits); checked before a hash ever reaches a path.

    :raises AttachmentError: naming ``where`` and what was expected."""
    if not isinstance(value, str) or _SHA256.fullmatch(value) is None:
        shown = repr(value)[:80]
        raise AttachmentError(
            f"{where}: {shown} is not an attachment hash (expected 64 lowercase hex "
            "digits, the SHA-256 of its bytes)"
        )
    return value


@attrs.frozen
class AttachmentRef:
    """One attachment as a request or a step references it."""

    sha256: str = attrs.field(validator=lambda _i, _a, v: check_sha256(v))
    media_type: str
    """Sniffed from the bytes when stored, never taken from the name."""
    name: str
    """The name it was given (a file's base name); for people, never for typing."""
    size: int

    def to_json(self) -> dict[str, Any]:
        return {
            "sha256": self.sha256,
            "media_type": self.media_type,
            "name": self.name,
            "size": self.size,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, where: str = "attachment") -> AttachmentRef:
        """A reference from its JSON (a request's meta, an API body).

        :raises AttachmentError: naming ``where`` and the field that is wrong."""
        if not isinstance(data, Mapping):
            raise AttachmentError(f"{where}: expected an object with sha256, got {data!r:.80}")
        sha = check_sha256(data.get("sha256"), where=f"{where}.sha256")
        media_type, name, size = data.get("media_type"), data.get("name", ""), data.get("size")
        if not isinstance(media_type, str) or "/" not in media_type:
            raise AttachmentError(f"{where}.media_type: expected a media type, got {media_type!r}")
        if not isinstance(name, str):
            raise AttachmentError(f"{where}.name: expected a text, got {name!r:.80}")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise AttachmentError(f"{where}.size: expected a byte count, got {size!r}")
        return cls(sha, media_type, name, size)


@attrs.frozen
class Attachment:
    """An attachment as a model gets it: its reference and the file holding its bytes
    (in the attachment store; read it, never write it)."""

    ref: AttachmentRef
    path: Path

    @property
    def media_type(self) -> str:
        return self.ref.media_type

    def read_bytes(self) -> bytes:
        return self.path.read_bytes()


def attachment_refs(meta: Mapping[str, Any]) -> tuple[AttachmentRef, ...]:
    """The attachments a turn request's ``meta`` references (none: ``()``).

    :raises AttachmentError: for a reference that is not one."""
    raw = meta.get(META_KEY)
    if not raw:
        return ()
    if not isinstance(raw, list | tuple):
        raise AttachmentError(f"meta.{META_KEY}: expected a list of attachments, got {raw!r:.80}")
    return tuple(
        AttachmentRef.from_json(item, where=f"meta.{META_KEY}[{i}]") for i, item in enumerate(raw)
    )


def with_attachments(meta: Mapping[str, Any], refs: Iterable[AttachmentRef]) -> dict[str, Any]:
    """``meta`` with ``refs`` as its attachments (what a door submits)."""
    listed = [ref.to_json() for ref in refs]
    return {**meta, META_KEY: listed} if listed else dict(meta)
