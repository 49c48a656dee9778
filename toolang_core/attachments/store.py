"""The attachment store: each attachment's bytes kept once, by content hash, under the
home directory, and who may use them.

    <dir>/ab/cdef…   the bytes whose SHA-256 is ``abcdef…`` (written once, read-only)

Taking an attachment (:meth:`AttachmentStore.put`) checks its size against
``[attachments] max_bytes`` and its type — sniffed from the bytes, never from the
name — against ``[attachments] types``, writes the bytes unless the same bytes are
there already, and records who gave them in the hash's **owner record**. A hash is
only good to the owners that gave those bytes (the operator sees every owner's, as
with turns: :func:`~toolang_core.store.owners.may_see`); to anyone else it is not
found, never "someone else's". The owner record of a hash lists its owners (an
``attachment`` record of the execution store, so both backends keep it).

Hashes are checked (:func:`~toolang_core.attachments.types.check_sha256`) before they
reach a path. The bytes never reach a log: events name the hash, type and size.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

import structlog

from toolang_core.attachments.sniff import matches, sniff
from toolang_core.attachments.types import (
    Attachment,
    AttachmentError,
    AttachmentNotFound,
    AttachmentRef,
    check_sha256,
)
from toolang_core.store.errors import RecordConflict
from toolang_core.store.owners import is_own, may_see

if TYPE_CHECKING:
    from toolang_core.config.model import AttachmentsConfig, ToolangConfig
    from toolang_core.store.protocol import ExecutionStore

RECORD_KIND: Final = "attachment"
"""The execution store's record kind of owner records: one per hash (key: the hash),
listing each owner that gave those bytes and the name it gave them."""
PUT_TRIES: Final = 8
"""Writers adding an owner to one hash at once: each retries its optimistic update."""

log = structlog.get_logger("toolang.attachments")


class AttachmentStore:
    """The attachments of one home directory and one execution store.

    ``store`` keeps the owner records; the caller owns it (and closes it)."""

    def __init__(self, folder: Path, config: AttachmentsConfig, store: ExecutionStore) -> None:
        self.folder = folder
        self.config = config
        self.store = store

    @classmethod
    def of(cls, config: ToolangConfig, store: ExecutionStore) -> AttachmentStore:
        """The attachment store of a runtime's configuration, on ``store``."""
        return cls(config.attachments_dir, config.attachments, store)

    # -- taking ---------------------------------------------------------------------------

    def put(self, data: bytes, *, name: str, owner: str | None) -> AttachmentRef:
        """Keep ``data`` (given as ``name``) for ``owner``: :meth:`check` then
        :meth:`keep`. The same bytes are stored once whoever gives them.

        :raises AttachmentError: naming ``name``: over ``max_bytes``, or of a type the
            configuration does not accept."""
        ref = self.check(data, name=name)
        self.keep(ref, data, owner=owner)
        return ref

    def check(self, data: bytes, *, name: str) -> AttachmentRef:
        """The reference ``data`` would get, checked but not stored (a door checks every
        attachment of a request, and the model it goes to, before it keeps any).

        :raises AttachmentError: naming ``name``: over ``max_bytes``, or of a type the
            configuration does not accept."""
        self.check_size(len(data), name)
        media_type = sniff(data)
        if not matches(media_type, self.config.types):
            accepted = ", ".join(self.config.types) or "none"
            raise AttachmentError(
                f"attachment {name!r}: its bytes are {media_type}, which is not accepted "
                f"([attachments] types: {accepted})"
            )
        return AttachmentRef(hashlib.sha256(data).hexdigest(), media_type, name, len(data))

    def keep(self, ref: AttachmentRef, data: bytes, *, owner: str | None) -> None:
        """Store ``data`` (whose reference :meth:`check` gave) for ``owner``."""
        path = self.path_of(ref.sha256)
        if not path.exists():
            _write_once(path, data)
        self._add_owner(ref, owner)
        log.info("attachment_stored", sha256=ref.sha256, media_type=ref.media_type, size=ref.size)

    def _add_owner(self, ref: AttachmentRef, owner: str | None) -> None:
        """Record that ``owner`` gave ``ref``'s bytes (as ``ref.name``), an optimistic
        update of the hash's owner record."""
        for _ in range(PUT_TRIES):
            record = self.store.get_record(RECORD_KIND, ref.sha256)
            given = list(record.data.get("owners", ())) if record is not None else []
            kept = [g for g in given if not is_own(g.get("owner"), owner)]
            data = {
                "media_type": ref.media_type,
                "size": ref.size,
                "owners": [*kept, {"owner": owner, "name": ref.name}],
            }
            try:
                self.store.put_record(
                    RECORD_KIND,
                    ref.sha256,
                    data,
                    now=time.time(),
                    expect_revision=record.revision if record is not None else 0,
                )
                return
            except RecordConflict:
                continue
        raise AttachmentError(
            f"attachment {ref.sha256}: its owner record kept changing under "
            f"{PUT_TRIES} writers; try again"
        )

    def put_file(self, path: Path, *, owner: str | None) -> AttachmentRef:
        """:meth:`put` of a file's bytes, under its base name.

        :raises AttachmentError: naming the file: unreadable, not a file, too large, or
            of a type not accepted."""
        return self.put(self.read_file(path), name=path.name, owner=owner)

    def read_file(self, path: Path) -> bytes:
        """A file's bytes, at most ``max_bytes`` of them.

        :raises AttachmentError: naming the file: unreadable, not a file, too large."""
        try:
            size = path.stat().st_size
            if not path.is_file():
                raise AttachmentError(f"attachment {str(path)!r}: not a file")
            self.check_size(size, str(path))
            with path.open("rb") as file:
                data = file.read(self.config.max_bytes + 1)
        except OSError as exc:
            raise AttachmentError(
                f"attachment {str(path)!r}: cannot be read ({exc.strerror or exc})"
            ) from None
        self.check_size(len(data), str(path))  # grown since stat
        return data

    def check_size(self, size: int, name: str) -> None:
        """:raises AttachmentError: when ``size`` bytes are over ``max_bytes``."""
        limit = self.config.max_bytes
        if size > limit:
            raise AttachmentError(
                f"attachment {name!r}: {size} bytes is over the limit of {limit} bytes "
                "([attachments] max_bytes)"
            )

    # -- giving ---------------------------------------------------------------------------

    def path_of(self, sha: str) -> Path:
        """Where the bytes of ``sha`` are (whether or not they are there).

        :raises AttachmentError: when ``sha`` is not a hash."""
        check_sha256(sha)
        return self.folder / sha[:2] / sha[2:]

    def ref(self, sha: str, *, owner: str | None) -> AttachmentRef:
        """The reference of ``sha`` as ``owner`` gave it (the operator: as anyone did).

        :raises AttachmentError: when ``sha`` is not a hash.
        :raises AttachmentNotFound: when no bytes of that hash are ``owner``'s to use."""
        check_sha256(sha)
        record = self.store.get_record(RECORD_KIND, sha)
        owners = record.data.get("owners", ()) if record is not None else ()
        # The owner's own name for it first; the operator's view: the first giver's.
        seen = [g for g in owners if is_own(g.get("owner"), owner)] or [
            g for g in owners if may_see(g.get("owner"), owner)
        ]
        if record is None or not seen or not self.path_of(sha).is_file():
            raise AttachmentNotFound(f"attachment {sha}: not found")
        data = record.data
        return AttachmentRef(sha, str(data["media_type"]), str(seen[0]["name"]), int(data["size"]))

    def attachment(self, ref: AttachmentRef, *, owner: str | None) -> Attachment:
        """``ref`` with the file of its bytes, for a model; the hash must be ``owner``'s
        (the owner of the request that references it).

        :raises AttachmentNotFound: when it is not (or its bytes are gone)."""
        stored = self.ref(ref.sha256, owner=owner)
        return Attachment(
            AttachmentRef(ref.sha256, stored.media_type, ref.name, stored.size),
            self.path_of(ref.sha256),
        )

    def read(self, sha: str, *, owner: str | None) -> tuple[AttachmentRef, bytes]:
        """The reference and the bytes of ``sha`` for ``owner`` (:meth:`ref`'s errors)."""
        ref = self.ref(sha, owner=owner)
        return ref, self.path_of(sha).read_bytes()


def _write_once(path: Path, data: bytes) -> None:
    """Write ``data`` at ``path`` whole or not at all (a temporary file renamed), read
    only: two writers of the same bytes leave the same file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".part-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(tmp, 0o444)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
