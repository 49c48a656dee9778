"""Refusing attachments at the door: a request's attachments checked against the model
of the agent it asks for, before it is submitted.

The turn checks again before its first model call (the agent executor's
``_attachments``): a door that cannot tell the model — the default agent routes, an
agent's model cannot be resolved here — leaves the decision to the turn.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from toolang_core.agents.catalog import AgentError
from toolang_core.attachments import AttachmentError, AttachmentRef, attachment_refusal
from toolang_core.models.resolve import ModelResolver
from toolang_core.models.types import ModelError

if TYPE_CHECKING:
    from toolang_core.runtime_parts import CoreRuntime


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
