"""Attachments: files a turn request carries (images, audio, documents, texts).

* :mod:`~toolang_core.attachments.types` — :class:`AttachmentRef` (what a request and
  a step reference), :class:`Attachment` (what a model gets), the errors;
* :mod:`~toolang_core.attachments.store` — :class:`AttachmentStore`, the bytes by hash
  under the home directory and who may use them;
* :mod:`~toolang_core.attachments.sniff` — the type, from the bytes;
* :mod:`~toolang_core.attachments.accept` — which models take which types.

See docs/attachments.md.
"""

from toolang_core.attachments.accept import REFUSED, accepted_types, attachment_refusal
from toolang_core.attachments.sniff import matches, sniff
from toolang_core.attachments.store import AttachmentStore
from toolang_core.attachments.types import (
    META_KEY,
    Attachment,
    AttachmentError,
    AttachmentNotFound,
    AttachmentRef,
    attachment_refs,
    check_sha256,
    with_attachments,
)

__all__ = [
    "META_KEY",
    "REFUSED",
    "Attachment",
    "AttachmentError",
    "AttachmentNotFound",
    "AttachmentRef",
    "AttachmentStore",
    "accepted_types",
    "attachment_refs",
    "attachment_refusal",
    "check_sha256",
    "matches",
    "sniff",
    "with_attachments",
]
