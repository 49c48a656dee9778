"""What the agent loop sends a model and what it gets back.

A model plugin registers a provider through ``toolang_register_models``; the provider
hands out :class:`Model` objects by model id. The agent loop keeps the whole message
history itself and sends it on every call, so models hold no conversation state.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, Literal, Protocol

import attrs

from toolang_core.attachments.types import Attachment
from toolang_core.errors import ModelError as ModelError  # noqa: PLC0414 (re-exported)
from toolang_core.tools.types import ToolCall

Role = Literal["system", "user", "assistant", "tool"]


@attrs.frozen
class Message:
    """One message of a conversation.

    An ``assistant`` message may carry ``tool_calls``; a ``tool`` message answers one of
    them (``tool_call_id``, ``name``) with its result as text. A ``user`` message may
    carry ``attachments`` (files the request brought: docs/attachments.md); a model
    only gets them when its ``attachment_types`` accept their types.
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    attachments: tuple[Attachment, ...] = ()


@attrs.frozen
class ToolSpec:
    """A tool as a model sees it: name, description, JSON Schema of its parameters."""

    name: str
    description: str
    parameters: Mapping[str, Any]


NO_HEADERS: Final[Mapping[str, str]] = MappingProxyType({})


@attrs.frozen
class ModelRequest:
    """Everything one model call needs."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    model_id: str | None = None
    options: Mapping[str, Any] = attrs.field(factory=dict)
    key: str | None = None
    """This call's step key in its turn, the same when a resumed turn repeats it: a
    provider whose call has a remote side effect (an A2A send) finds its earlier
    attempt by it instead of repeating the effect. ``None`` outside a turn."""
    headers: Mapping[str, str] = NO_HEADERS
    """Headers a provider that calls another service over HTTP sends with this call:
    what plugins answered ``toolang_outbound_headers`` for it (a tracer's W3C
    ``traceparent``); empty when no plugin adds any."""
    output_schema: Mapping[str, Any] | None = None
    """The JSON Schema the final answer must match (a typed answer, see
    docs/typed-answers.md), or ``None``. A provider with native structured output
    passes it on (llm's ``schema=``); the others may ignore it: the prompt says it too,
    and the loop validates every answer whichever the provider."""


@attrs.frozen
class ModelResponse:
    """A model's answer: text, tool calls, or both. ``usage`` counts tokens if known."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Mapping[str, int] = attrs.field(factory=dict)
    model: str = ""


class Model(Protocol):
    """One model. ``complete`` is called once per step of the agent loop.

    A model that takes attachments says which by an ``attachment_types`` attribute
    (media types or patterns: ``("image/*", "application/pdf")``); without one it is
    given none, and a turn that brings some fails before calling it
    (:mod:`toolang_core.attachments.accept`)."""

    async def complete(self, request: ModelRequest) -> ModelResponse: ...


class ModelProvider(Protocol):
    """What a ``toolang_register_models`` factory returns."""

    def model(self, model_id: str | None) -> Model:
        """The model with this id (``None``: the provider's default).

        :raises ModelError: for an unknown id, naming the ids that exist if it can.
        """
        ...
