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
(:func:`tool_attachments`, :class:`FileFitting`). Each model call's step says, per
file, what that model got: attached or a text reference (:class:`FileSent`).
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


def as_given(
    runtime: CoreRuntime, store: ExecutionStore, owner: str | None, refs: Sequence[AttachmentRef]
) -> tuple[AttachmentRef, ...]:
    """``refs`` replayed from a stored step — whose names are masked at rest — with each
    file's name as ``owner`` gave it (the attachment store's owner record keeps it) when
    the redaction policy masks that name to the stored one: what the turn sent its model
    before it was interrupted, so a resumed turn sends the same. A file that is not
    ``owner``'s, or whose record names it otherwise, keeps the stored name."""
    if not refs:
        return ()
    kept = AttachmentStore.of(runtime.config, store)
    mask = runtime.redaction.text
    out: list[AttachmentRef] = []
    for ref in refs:
        try:
            given = kept.ref(ref.sha256, owner=owner).name
        except AttachmentError:
            given = ref.name  # not found: tool_attachments says so to the model
        same = given == ref.name or mask(given) != ref.name
        out.append(ref if same else attrs.evolve(ref, name=given))
    return tuple(out)


@attrs.frozen
class FileSent:
    """What one model call's model got of one file of its prompt: the file attached, or
    a text reference in its place (``why``: what the model takes). Its step stores it
    (:meth:`to_json`: the reference, never the bytes; masked like the rest of the step)."""

    message: int
    """The index of the message that carries the file, in the prompt as stored."""
    ref: AttachmentRef
    attached: bool
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"message": self.message, **self.ref.to_json()}
        data["sent"] = "attached" if self.attached else "text_reference"
        if self.why:
            data["why"] = self.why
        return data


class FileFitting:
    """An agent loop's prompt as each model is sent it (:meth:`fit`). A tool answer
    fitted to a model is made once per model and kept, so the prompts of that model's
    later calls repeat the same messages (their steps encode only what is new:
    :class:`~toolang_core.turn.trace.MaskedMessages`)."""

    __slots__ = ("_fitted",)

    def __init__(self) -> None:
        # (id of the message, model name) → (the message, held so its id stays its
        # own; the message as that model gets it)
        self._fitted: dict[tuple[int, str], tuple[Message, Message]] = {}

    def fit(
        self, model: Any, model_name: str, messages: tuple[Message, ...]
    ) -> tuple[tuple[Message, ...], tuple[FileSent, ...]]:
        """``messages`` as ``model`` (named ``model_name``) is sent them, and what it
        gets of each file in them. A tool answer's file of a type the model does not
        take is left out, and a text reference to it is added to that answer's text;
        the user's attachments were checked before the turn began and are sent as they
        are. ``messages`` itself when nothing is left out."""
        if not any(m.attachments for m in messages):
            return messages, ()
        accepted = accepted_types(model)
        takes = ", ".join(accepted) if accepted else "no attachments"
        out: list[Message] = []
        files: list[FileSent] = []
        changed = False
        for index, message in enumerate(messages):
            if not message.attachments:
                out.append(message)
                continue
            refused = (
                [a for a in message.attachments if not matches(a.media_type, accepted)]
                if message.role == "tool"
                else []
            )
            for a in message.attachments:
                why = "" if a not in refused else _not_taken(model_name, a.media_type, takes)
                files.append(FileSent(index, a.ref, not why, why))
            if not refused:
                out.append(message)
                continue
            changed = True
            out.append(self._fitted_message(message, model_name, refused, takes))
        return (tuple(out) if changed else messages), tuple(files)

    def _fitted_message(
        self, message: Message, model_name: str, refused: list[Attachment], takes: str
    ) -> Message:
        key = (id(message), model_name)
        known = self._fitted.get(key)
        if known is None or known[0] is not message:
            notes = [note(a.ref, _not_taken(model_name, a.media_type, takes)) for a in refused]
            fitted = attrs.evolve(
                message,
                content="\n".join([message.content, *notes]),
                attachments=tuple(a for a in message.attachments if a not in refused),
            )
            known = self._fitted[key] = (message, fitted)
        return known[1]


def _not_taken(model_name: str, media_type: str, takes: str) -> str:
    return f"model {model_name!r} does not accept {media_type} (it accepts: {takes})"
