"""Files a tool gives back with its result (:class:`~toolang_core.tools.types.ToolOutput`):
kept in the attachment store as a request's attachments are, and referenced by the
result.

The bytes go into the store once, by hash, owned by the turn's owner (the request's
``owner``; the operator outside a turn), under ``[attachments] max_bytes`` and
``types``. Every file is checked before any is kept: a call whose files cannot all be
kept keeps none of them.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from toolang_core.attachments.store import AttachmentStore
from toolang_core.attachments.types import AttachmentError, AttachmentRef

if TYPE_CHECKING:
    from toolang_core.tools.types import ToolCallContext, ToolFile


async def keep_files(
    tool: str, files: tuple[ToolFile, ...], ctx: ToolCallContext
) -> tuple[AttachmentRef, ...]:
    """The references of ``files`` (given back by ``tool``), kept in the attachment
    store of ``ctx``'s runtime.

    :raises AttachmentError: naming the tool and the file, when a file is over
        ``[attachments] max_bytes`` or of a type ``[attachments] types`` does not take,
        or when there is no store to keep them in (no runtime serving)."""
    if not files:
        return ()
    runtime = ctx.runtime
    store = runtime.store if runtime is not None else None
    if runtime is None or store is None:
        raise AttachmentError(
            f"tool {tool!r} gave back {len(files)} file(s) but there is no attachment "
            "store to keep them in (the runtime is not serving)"
        )
    attachments = AttachmentStore.of(runtime.config, store)
    owner = ctx.turn.request.owner if ctx.turn is not None else None

    def keep() -> tuple[AttachmentRef, ...]:
        try:
            refs = [attachments.check(f.data, name=f.name) for f in files]
        except AttachmentError as exc:
            refused = f"tool {tool!r} gave back a file that is refused: {exc}"
            raise AttachmentError(refused) from None
        for ref, file in zip(refs, files, strict=True):
            attachments.keep(ref, file.data, owner=owner)
        return tuple(refs)

    return await asyncio.to_thread(keep)
