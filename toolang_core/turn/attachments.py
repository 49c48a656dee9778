"""Refusing attachments at the door: a request's attachments checked against the model
of the agent it asks for, before it is submitted.

The turn checks again before its first model call (the agent executor's
``_attachments``): a door that cannot tell the model — the default agent routes, an
agent's model cannot be resolved here — leaves the decision to the turn.

A fallback model that does not take a turn's attachments is skipped for that turn, with
the reason in its ``prompt_build`` step and the log (:func:`fallbacks_taking`).

Files a tool gives back (``ToolResult.attachments``) never fail a turn: each model call
gets them with the tool's answer when that model takes their type, and a text reference
(name, type, size, hash) in the answer's text when it does not
(:func:`tool_attachments`, :func:`fitted_for`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from toolang_core.agents.catalog import AgentError
from toolang_core.attachments import (
    Attachment,
    AttachmentError,
    AttachmentRef,
    AttachmentStore,
    accepted_types,
    attachment_refusal,
    matches,
)
from toolang_core.models.resolve import ModelResolver
from toolang_core.models.types import Message, ModelError

if TYPE_CHECKING:
    from toolang_core.runtime_parts import CoreRuntime
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.turn.model_retry import Candidate


def check_attachments_accepted(
    runtime: CoreRuntime, agent: str | None, refs: Iterable[AttachmentRef]
) -> None:
    """Refuse ``refs`` when the model of ``agent`` (``None``: the default agent) does
    not take their types. An agent or model that cannot be resolved here is not
    refused: the turn reports it.

    :raises AttachmentError: naming the model, the attachment and its type."""
    refs = tuple(refs)
    if not refs:
        return
    try:
        definition = runtime.agents.agent(agent)
        name = definition.model or runtime.config.models.default
        model = ModelResolver(runtime).resolve(name, wanted_by=f"agent {definition.name!r}")
    except (AgentError, ModelError):
        return
    refused = attachment_refusal(model, name, refs)
    if refused is not None:
        raise AttachmentError(refused)


def fallbacks_taking(
    fallbacks: Sequence[Candidate], refs: Sequence[AttachmentRef]
) -> tuple[tuple[Candidate, ...], list[str]]:
    """The ``fallbacks`` that accept every one of ``refs``, and why each of the others is
    skipped: a fallback that cannot take the turn's attachments is never asked (it
    would answer without them), so a turn whose model fails goes on to the next
    fallback that can, or fails with the model's error."""
    kept: list[Candidate] = []
    skipped: list[str] = []
    for candidate in fallbacks:
        refused = attachment_refusal(candidate.model, candidate.name, refs)
        if refused is None:
            kept.append(candidate)
        else:
            skipped.append(f"fallback skipped: {refused}")
    return tuple(kept), skipped


def note(ref: AttachmentRef, why: str) -> str:
    """The text reference a model gets for a file it is not given."""
    return (
        f"[attachment {ref.name!r} ({ref.media_type}, {ref.size} bytes, sha256 "
        f"{ref.sha256}) not sent: {why}]"
    )


def tool_attachments(
    runtime: CoreRuntime, store: ExecutionStore, owner: str | None, refs: Sequence[AttachmentRef]
) -> tuple[tuple[Attachment, ...], tuple[str, ...]]:
    """The files of a tool result (``refs``, kept for ``owner``) for the model, and a
    text reference of each whose bytes are not ``owner``'s or are gone."""
    if not refs:
        return (), ()
    kept = AttachmentStore.of(runtime.config, store)
    found: list[Attachment] = []
    missing: list[str] = []
    for ref in refs:
        try:
            found.append(kept.attachment(ref, owner=owner))
        except AttachmentError as exc:
            missing.append(note(ref, str(exc)))
    return tuple(found), tuple(missing)


def fitted_for(model: Any, model_name: str, messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """``messages`` as ``model`` (named ``model_name``) is sent them: each tool answer's
    file of a type it does not take is left out, and a text reference to it is added to
    that answer's text. The user's attachments were checked before the turn began."""
    if not any(m.role == "tool" and m.attachments for m in messages):
        return messages
    accepted = accepted_types(model)
    takes = ", ".join(accepted) if accepted else "no attachments"
    out: list[Message] = []
    for message in messages:
        refused = [a for a in message.attachments if not matches(a.media_type, accepted)]
        if message.role != "tool" or not refused:
            out.append(message)
            continue
        notes = [
            note(
                a.ref,
                f"model {model_name!r} does not accept {a.media_type} (it accepts: {takes})",
            )
            for a in refused
        ]
        out.append(
            attrs.evolve(
                message,
                content="\n".join([message.content, *notes]),
                attachments=tuple(a for a in message.attachments if a not in refused),
            )
        )
    return tuple(out)
