"""Files a tool gives back with its result (:class:`~toolang_core.tools.types.ToolOutput`):
kept in the attachment store as a request's attachments are, and referenced by the
result.

The bytes go into the store once, by hash, owned by the turn's owner (the request's
``owner``; the operator outside a turn), under ``[attachments] max_bytes`` and
``types``. Every file is checked when the tool returns (:func:`check_files`): a call
whose files cannot all be kept keeps none of them. They are kept only once the chain
has accepted the result (:func:`keep_accepted`, after the result filters and the
observers): a result a filter or a required plugin withholds leaves nothing in the
store that nothing references — and nothing is deleted, so a blob another reference
uses is never touched.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import attrs

from toolang_core.attachments.store import AttachmentStore
from toolang_core.attachments.types import AttachmentError, AttachmentRef

if TYPE_CHECKING:
    from toolang_core.tools.types import ToolCallContext, ToolFile, ToolResult

CheckedFiles = tuple[tuple[AttachmentRef, "ToolFile"], ...]
"""A call's files, checked and not yet kept: each with the reference it will have."""


def _store(tool: str, count: int, ctx: ToolCallContext) -> AttachmentStore:
    runtime = ctx.runtime
    store = runtime.store if runtime is not None else None
    if runtime is None or store is None:
        raise AttachmentError(
            f"tool {tool!r} gave back {count} file(s) but there is no attachment "
            "store to keep them in (the runtime is not serving)"
        )
    return AttachmentStore.of(runtime.config, store)


async def check_files(tool: str, files: tuple[ToolFile, ...], ctx: ToolCallContext) -> CheckedFiles:
    """``files`` (given back by ``tool``) with their references, checked against the
    attachment store of ``ctx``'s runtime but not kept (:func:`keep_accepted` keeps them).

    :raises AttachmentError: naming the tool and the file, when a file is over
        ``[attachments] max_bytes`` or of a type ``[attachments] types`` does not take,
        or when there is no store to keep them in (no runtime serving)."""
    if not files:
        return ()
    attachments = _store(tool, len(files), ctx)

    def check() -> CheckedFiles:
        try:
            return tuple((attachments.check(f.data, name=f.name), f) for f in files)
        except AttachmentError as exc:
            refused = f"tool {tool!r} gave back a file that is refused: {exc}"
            raise AttachmentError(refused) from None

    return await asyncio.to_thread(check)


async def keep_accepted(
    tool: str, checked: CheckedFiles, result: ToolResult, ctx: ToolCallContext
) -> tuple[AttachmentRef, ...]:
    """Keep the files of ``checked`` that ``result`` — as the chain accepted it —
    references (by hash; under the name the result gives them), for the turn's owner.
    The others (a withheld result references none) are never stored. Returns the
    references kept.

    :raises AttachmentError: when the store cannot keep one (e.g. its owner record
        kept changing)."""
    wanted = {ref.sha256: ref for ref in result.attachments}
    kept = [
        (attrs.evolve(ref, name=wanted[ref.sha256].name), file)
        for ref, file in checked
        if ref.sha256 in wanted
    ]
    if not kept:
        return ()
    attachments = _store(tool, len(kept), ctx)
    owner = ctx.turn.request.owner if ctx.turn is not None else None

    def keep() -> tuple[AttachmentRef, ...]:
        for ref, file in kept:
            attachments.keep(ref, file.data, owner=owner)
        return tuple(ref for ref, _ in kept)

    try:
        return await asyncio.to_thread(keep)
    except OSError as exc:
        raise AttachmentError(
            f"tool {tool!r} gave back files that could not be kept: {exc.strerror or exc}"
        ) from None
