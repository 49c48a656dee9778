"""A2A file parts as toolang attachments.

An inbound message's file part — ``raw`` bytes, with an optional ``filename`` and
``mediaType`` — is stored as an attachment of the caller (docs/attachments.md): its
type sniffed from the bytes (the ``mediaType`` the caller declares is not trusted),
its size held to ``[attachments] max_bytes``, and the agent's model checked to take
it, before anything is kept or submitted. A part that only gives a ``url`` is refused:
this runtime does not fetch what a remote caller points at (a request forgery
waiting to happen); the caller sends the bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from a2a.utils.errors import ContentTypeNotSupportedError, InvalidParamsError

from toolang_core import AttachmentError, AttachmentRef, AttachmentStore, check_attachments_accepted
from toolang_source_a2a.tasks import SCHEMA_MEDIA_TYPE

if TYPE_CHECKING:
    from toolang_core import ExecutionStore, Runtime


def split_parts(parts: Sequence[Any]) -> tuple[list[str], list[Any]]:
    """``(texts, file parts)`` of a message's parts (a data part holding the answer's
    JSON Schema is neither: ``handler.output_schema_of`` reads it).

    :raises ContentTypeNotSupportedError: for a part of another kind (other data), and
        for a file by ``url``."""
    texts, files = [], []
    for index, part in enumerate(parts):
        kind = part.WhichOneof("content")
        if kind == "url":
            raise ContentTypeNotSupportedError(
                message=f"message.parts[{index}]: a file by url is not fetched; send its "
                "bytes (raw) instead"
            )
        if kind == "raw":
            files.append(part)
        elif kind == "text":
            texts.append(part.text)
        elif not (kind == "data" and part.media_type == SCHEMA_MEDIA_TYPE):
            raise ContentTypeNotSupportedError(
                message="this agent accepts text parts (text/plain), file parts (raw "
                f"bytes), and a data part of media type {SCHEMA_MEDIA_TYPE} holding the "
                "answer's JSON Schema"
            )
    return texts, files


def take_files(
    runtime: Runtime,
    store: ExecutionStore,
    parts: Sequence[Any],
    *,
    owner: str,
    agent: str | None,
) -> tuple[AttachmentRef, ...]:
    """Keep ``parts`` (A2A ``raw`` file parts, from :func:`split_parts`) for ``owner``.

    :raises InvalidParamsError: for a part too large or of a type not taken, naming it.
    :raises ContentTypeNotSupportedError: when the agent's model does not take one."""
    if not parts:
        return ()
    attachments = AttachmentStore.of(runtime.config, store)
    taken: list[tuple[AttachmentRef, bytes]] = []
    for index, part in enumerate(parts):
        # A name for people, never a path: the bytes are kept by their hash.
        name = (part.filename or f"file-{index + 1}").replace("/", "_").replace("\\", "_")
        try:
            taken.append((attachments.check(part.raw, name=name), part.raw))
        except AttachmentError as exc:
            raise InvalidParamsError(message=str(exc)) from None
    refs = [ref for ref, _ in taken]
    try:
        check_attachments_accepted(runtime, agent, refs)
    except AttachmentError as exc:
        raise ContentTypeNotSupportedError(message=str(exc)) from None
    for ref, data in taken:
        attachments.keep(ref, data, owner=owner)
    return tuple(refs)
