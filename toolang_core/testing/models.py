"""A scripted model for tests: a list of steps, or a function.

    model = ScriptedModel([tool_call("fs_write", {"path": "a", "text": "b"}), text("done")])

Steps are consumed in order, one per model call. The model fails loudly: a call with no
step left raises :class:`UnexpectedModelCall`, and :meth:`ScriptedModel.assert_complete`
(run for you by the ``toolang_scripted_model`` fixture) raises
:class:`UnconsumedModelSteps` when a test leaves steps unused. ``calls`` records every
request. Function mode — ``ScriptedModel(lambda request: text("…"))`` — answers each
call with whatever the function returns (a step or a ``ModelResponse``; sync or async).

It accepts attachments of the types in ``attachment_types`` (default: every type;
``ScriptedModel(steps, attachment_types=())`` is a model that takes none), and
:attr:`ScriptedModel.attachments` lists those it was given.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import Any

import attrs

from toolang_core.attachments.types import Attachment
from toolang_core.errors import ModelErrorKind
from toolang_core.markers import hookimpl
from toolang_core.models.types import ModelError, ModelRequest, ModelResponse
from toolang_core.tools.types import ToolCall


class UnexpectedModelCall(AssertionError):
    """The scripted model was asked for more steps than it has."""


class UnconsumedModelSteps(AssertionError):
    """A test ended with steps of the scripted model unused."""


@attrs.frozen
class Step:
    """One scripted answer: text, tool calls, an error to raise, after an optional delay."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    error: str | None = None
    error_kind: ModelErrorKind | None = None
    """The raised ``ModelError``'s kind (``None``: unclassified, never retried)."""
    delay: float = 0.0
    word_delay: float = 0.0
    """When streamed: the pause before each word after the first (a visibly slow answer)."""
    usage: Mapping[str, int] = attrs.field(factory=dict)
    """The token usage the answer reports, as a provider would (``{"input_tokens": 120,
    "output_tokens": 8}``); empty: none reported."""


def text(
    content: str,
    *,
    delay: float = 0.0,
    word_delay: float = 0.0,
    usage: Mapping[str, int] | None = None,
) -> Step:
    return Step(text=content, delay=delay, word_delay=word_delay, usage=dict(usage or {}))


def tool_call(
    name: str,
    params: Mapping[str, Any] | None = None,
    *,
    call_id: str = "",
    delay: float = 0.0,
    usage: Mapping[str, int] | None = None,
) -> Step:
    call = ToolCall(call_id, name, dict(params or {}))
    return Step(tool_calls=(call,), delay=delay, usage=dict(usage or {}))


def tool_calls(
    *calls: tuple[str, Mapping[str, Any]], usage: Mapping[str, int] | None = None
) -> Step:
    return Step(
        tool_calls=tuple(ToolCall(f"c{i}", n, dict(p)) for i, (n, p) in enumerate(calls)),
        usage=dict(usage or {}),
    )


def tokens(input: int, output: int = 0, *, cached: int | None = None) -> dict[str, int]:
    """A usage report for a scripted step: ``text("hi", usage=tokens(100, 20))``."""
    usage = {"input_tokens": input, "output_tokens": output}
    if cached is not None:
        usage["cached_tokens"] = cached
    return usage


def error(message: str, *, kind: ModelErrorKind | None = None) -> Step:
    """A step raising ``ModelError(message)`` of ``kind`` (``"rate_limit"``, …)."""
    return Step(error=message, error_kind=kind)


async def _respond(step: Step) -> ModelResponse:
    if step.delay:
        await asyncio.sleep(step.delay)
    if step.error is not None:
        raise ModelError(step.error, kind=step.error_kind)
    return ModelResponse(
        text=step.text, tool_calls=step.tool_calls, usage=step.usage, model="scripted"
    )


_WORD = re.compile(r"\s*\S+\s*|\s+")


async def stream_words(response: ModelResponse, word_delay: float = 0.0) -> AsyncIterator[Any]:
    """Stream ``response`` word by word (whitespace kept, so the deltas join to its text),
    then the response itself."""
    for index, word in enumerate(_WORD.findall(response.text)):
        if index and word_delay:
            await asyncio.sleep(word_delay)
        yield word
    yield response


Function = Callable[[ModelRequest], "Step | ModelResponse | Awaitable[Step | ModelResponse]"]


class ScriptedModel:
    """See the module docstring."""

    def __init__(
        self, script: Iterable[Step] | Function, *, attachment_types: Iterable[str] = ("*/*",)
    ) -> None:
        self.function: Function | None = script if callable(script) else None
        self.steps: list[Step] = [] if callable(script) else list(script)
        self.calls: list[ModelRequest] = []
        self.attachment_types: tuple[str, ...] = tuple(attachment_types)
        """The media types it takes (patterns: ``image/*``); read by the runtime."""

    @property
    def attachments(self) -> list[Attachment]:
        """Every attachment its calls were given (in order, repeats removed)."""
        seen: dict[tuple[str, str], Attachment] = {}
        for call in self.calls:
            for message in call.messages:
                for attachment in message.attachments:
                    seen.setdefault((attachment.ref.sha256, attachment.ref.name), attachment)
        return list(seen.values())

    @property
    def remaining(self) -> int:
        return len(self.steps) - len(self.calls) if self.function is None else 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls.append(request)
        if self.function is not None:
            answer = self.function(request)
            if inspect.isawaitable(answer):
                answer = await answer
            return answer if isinstance(answer, ModelResponse) else await _respond(answer)
        index = len(self.calls) - 1
        if index >= len(self.steps):
            last = request.messages[-1].content[:200] if request.messages else ""
            raise UnexpectedModelCall(
                f"the scripted model was called {len(self.calls)} times but has "
                f"{len(self.steps)} step(s); the last message was {last!r}"
            )
        return await _respond(self.steps[index])

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        """The same answers as :meth:`complete`, streamed word by word."""
        index = len(self.calls)
        response = await self.complete(request)
        step = self.steps[index] if self.function is None and index < len(self.steps) else None
        async for item in stream_words(response, step.word_delay if step else 0.0):
            yield item

    def assert_complete(self) -> None:
        if self.remaining > 0:
            unused = self.steps[len(self.calls) :]
            raise UnconsumedModelSteps(
                f"{len(unused)} scripted step(s) were never used: {unused!r}"
            )

    def plugin(self, name: str = "scripted") -> object:
        """A plugin object offering this model as provider ``name``."""
        model = self

        class _Provider:
            def model(self, model_id: str | None) -> ScriptedModel:
                return model

        class _Plugin:
            @staticmethod
            @hookimpl
            def toolang_register_models(register: Any) -> None:
                register(
                    name, lambda context: _Provider(), description="a scripted model for tests"
                )

        return _Plugin()
