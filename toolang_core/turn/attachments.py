"""Refusing attachments at the door: a request's attachments checked against the model
of the agent it asks for, before it is submitted.

The turn checks again before its first model call (the agent executor's
``_attachments``): a door that cannot tell the model — the default agent routes, an
agent's model cannot be resolved here — leaves the decision to the turn.

A fallback model that does not take a turn's attachments is skipped for that turn, with
the reason in its ``prompt_build`` step and the log (:func:`fallbacks_taking`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from toolang_core.agents.catalog import AgentError
from toolang_core.attachments import AttachmentError, AttachmentRef, attachment_refusal
from toolang_core.models.resolve import ModelResolver
from toolang_core.models.types import ModelError

if TYPE_CHECKING:
    from toolang_core.runtime_parts import CoreRuntime
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
