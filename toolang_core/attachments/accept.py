"""Which attachments a model takes, and the refusal when it does not.

A model says what it accepts by an ``attachment_types`` attribute: media types or
patterns (``image/png``, ``image/*``, ``*/*``). A model without one accepts none. The
check runs before any call of the model (:func:`attachment_refusal`): a turn whose attachments
its model does not accept fails with outcome ``attachment_refused``, naming the model
and the type, and the model is never called.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from toolang_core.attachments.sniff import matches
from toolang_core.attachments.types import AttachmentRef

REFUSED: Final = "attachment_refused"
"""The outcome of a turn whose model does not accept one of its attachments."""


def accepted_types(model: Any) -> tuple[str, ...]:
    """What ``model`` declares it accepts (``attachment_types``; none without it)."""
    declared = getattr(model, "attachment_types", None)
    if not declared:
        return ()
    return tuple(str(t) for t in declared)


def attachment_refusal(model: Any, model_name: str, refs: Iterable[AttachmentRef]) -> str | None:
    """Why ``model`` (named ``model_name``) cannot take ``refs``, or ``None`` if it can."""
    accepted = accepted_types(model)
    for ref in refs:
        if not matches(ref.media_type, accepted):
            takes = ", ".join(accepted) if accepted else "no attachments"
            return (
                f"model {model_name!r} does not accept attachment {ref.name!r} of type "
                f"{ref.media_type} (it accepts: {takes}); use a model that does, or send "
                "the request without it"
            )
    return None
