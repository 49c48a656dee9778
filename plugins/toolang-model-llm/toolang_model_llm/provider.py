"""The ``llm`` model provider: toolang models backed by llm models.

One provider per runtime (toolang builds it on first use). It reads llm's catalogue once,
in a worker thread. Each call sends the whole conversation, with the tool definitions
and no tool implementations: llm never runs a tool, so every call the model asks for
goes back to toolang's chain (SecurityFilter, ApprovalGate, …). A typed answer's
JSON Schema goes to models that support llm's ``schema=`` (native structured output).

Async llm models are awaited on the event loop; sync-only ones run in a worker thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Mapping
from typing import Any

from toolang_core.models import ModelError, ModelRequest, ModelResponse
from toolang_model_llm import convert, errors
from toolang_model_llm.catalogue import Catalogue, Entry
from toolang_model_llm.settings import LlmSettings


class LlmProvider:
    """Hands out :class:`LlmModel` objects; keeps llm's catalogue for the runtime."""

    def __init__(self, settings: LlmSettings) -> None:
        self.settings = settings
        self._catalogue: Catalogue | None = None
        self._lock = threading.Lock()

    def model(self, model_id: str | None) -> LlmModel:
        """The llm model ``model_id`` (``None``: llm's default model).

        Cheap and non-blocking: the id is checked on the first call, off the event loop,
        where an unknown one fails with a ``ModelError`` naming ids that exist.
        """
        return LlmModel(self, model_id or None)

    def catalogue(self) -> Catalogue:
        """llm's models, read on first use (blocking: call it in a worker thread)."""
        with self._lock:
            if self._catalogue is None:
                try:
                    self._catalogue = Catalogue.load()
                except Exception as exc:  # a broken llm plugin: say so, do not crash the turn
                    raise ModelError(
                        f"could not read llm's models: {type(exc).__name__}: "
                        f"{errors.one_line(str(exc))}"
                    ) from None
            return self._catalogue

    async def entry(self, model_id: str | None) -> Entry:
        catalogue = self._catalogue
        if catalogue is None:
            catalogue = await asyncio.to_thread(self.catalogue)
        return catalogue.get(model_id)


class LlmModel:
    """One llm model as a toolang :class:`~toolang_core.models.Model` (no state)."""

    def __init__(self, provider: LlmProvider, model_id: str | None) -> None:
        self.provider = provider
        self.model_id = model_id

    @property
    def attachment_types(self) -> tuple[str, ...]:
        """The media types the llm model takes as attachments (its own
        ``attachment_types``; none for an unknown model, whose call fails anyway).
        Reads llm's catalogue on first use: asked once per turn that brings some."""
        try:
            entry = self.provider.catalogue().get(self.model_id)
        except ModelError:
            return ()
        return tuple(sorted(getattr(entry.any, "attachment_types", None) or ()))

    async def check(self) -> None:
        """Whether llm knows this model (``toolang doctor`` asks; no request is sent).

        :raises ModelError: naming the ids that exist.
        """
        await self.provider.entry(self.model_id)

    async def _prepare(
        self, request: ModelRequest, *, stream: bool
    ) -> tuple[Entry, Any, dict[str, Any]]:
        entry = await self.provider.entry(self.model_id)
        names = {entry.model_id, self.model_id or entry.model_id}
        if not entry.offline and not names & set(self.provider.settings.offline_models):
            errors.check_real_calls_allowed(entry.model_id)
        model = entry.any
        arguments = convert.prompt_arguments(
            request, with_tools=bool(getattr(model, "supports_tools", False))
        )
        if request.output_schema is not None and getattr(model, "supports_schema", False):
            # Native structured output (a typed answer): toolang validates it either way.
            arguments["schema"] = dict(request.output_schema)
        arguments["options"] = self._options(entry, request.options)
        arguments["stream"] = stream
        key = await self._override_key(entry)
        if key is not None:
            arguments["key"] = key
        return entry, model, arguments

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """One model call. :raises ModelError: saying what failed and what to do."""
        entry, model, arguments = await self._prepare(request, stream=False)
        try:
            if entry.async_ is not None:
                text, calls, usage, resolved = await _run_async(entry.async_, arguments)
            else:
                text, calls, usage, resolved = await asyncio.to_thread(
                    _run_sync, entry.sync, arguments
                )
        except ModelError:
            raise
        except Exception as exc:
            raise errors.from_llm(exc, model) from None
        return convert.to_model_response(
            text=text, tool_calls=calls, usage=usage, model=resolved or entry.model_id
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[str | ModelResponse]:
        """One model call, its text yielded as llm streams it, then the whole response.

        :raises ModelError: saying what failed and what to do."""
        entry, model, arguments = await self._prepare(request, stream=True)
        try:
            if entry.async_ is not None:
                response = entry.async_.prompt(**arguments)
                async for chunk in response:
                    yield chunk
                calls = await response.tool_calls()
                usage = await response.usage()
            else:
                response = entry.sync.prompt(**arguments)
                async for chunk in _sync_chunks(response):
                    yield chunk
                calls, usage = await asyncio.to_thread(
                    lambda: (response.tool_calls(), response.usage())
                )
        except ModelError:
            raise
        except Exception as exc:
            raise errors.from_llm(exc, model) from None
        yield convert.to_model_response(
            text="", tool_calls=calls, usage=usage, model=response.resolved_model or entry.model_id
        )

    def _setting(self, table: Mapping[str, Any], entry: Entry) -> Any:
        """``table``'s value for this model: under the name agents use, else its id."""
        if self.model_id is not None and self.model_id in table:
            return table[self.model_id]
        return table.get(entry.model_id)

    def _options(self, entry: Entry, requested: Mapping[str, Any]) -> dict[str, Any]:
        """``[plugins.model-llm] options`` for this model, then the request's, checked."""
        configured = dict(self._setting(self.provider.settings.options, entry) or {})
        options = {**configured, **requested}
        try:
            entry.any.Options(**options)
        except Exception as exc:
            where = (
                f"[plugins.model-llm] options.{self.model_id or entry.model_id}"
                if configured
                else "the request's options"
            )
            raise ModelError(
                f"{where}: {_option_problems(exc)}; `llm models --options -m "
                f"{entry.model_id}` lists the options of llm model {entry.model_id!r}"
            ) from None
        return options

    async def _override_key(self, entry: Entry) -> str | None:
        """The key named by ``[plugins.model-llm] keys``, or ``None`` (llm finds its own)."""
        alias = self._setting(self.provider.settings.keys, entry)
        if not alias:
            return None
        key = await asyncio.to_thread(_stored_key, alias)
        if not key:
            raise ModelError(
                f"[plugins.model-llm] keys.{self.model_id or entry.model_id} names the llm key "
                f"{alias!r}, which llm's key store does not have: run `llm keys set {alias}`"
            )
        return key


def _stored_key(alias: str) -> str | None:
    import llm

    # By alias only: get_key(input=…) would send an unknown alias itself as the key.
    key: str | None = llm.get_key(alias=alias)
    return key


def _option_problems(exc: Exception) -> str:
    """pydantic's validation errors as ``name: message`` pairs on one line."""
    found = getattr(exc, "errors", None)
    if callable(found):
        problems = [
            f"{'.'.join(str(p) for p in e.get('loc', ())) or 'options'}: {e.get('msg', '')}"
            for e in found()
        ]
        if problems:
            return errors.one_line("; ".join(problems))
    return errors.one_line(str(exc))


async def _run_async(model: Any, arguments: dict[str, Any]) -> tuple[str, list[Any], Any, Any]:
    response = model.prompt(**arguments)
    text: str = await response.text()
    calls: list[Any] = await response.tool_calls()
    usage = await response.usage()
    return text, calls, usage, response.resolved_model


async def _sync_chunks(response: Any) -> AsyncIterator[str]:
    """A sync llm response's chunks, read in a worker thread, as an async iterator."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def read() -> None:
        try:
            for chunk in response:
                loop.call_soon_threadsafe(queue.put_nowait, ("chunk", chunk))
        except Exception as exc:
            loop.call_soon_threadsafe(queue.put_nowait, ("error", exc))
        else:
            loop.call_soon_threadsafe(queue.put_nowait, ("end", None))

    reader = asyncio.create_task(asyncio.to_thread(read))
    while True:
        kind, value = await queue.get()
        if kind == "chunk":
            yield str(value)
        elif kind == "error":
            raise value
        else:
            await reader
            return


def _run_sync(model: Any, arguments: dict[str, Any]) -> tuple[str, list[Any], Any, Any]:
    response = model.prompt(**arguments)
    text: str = response.text()
    calls: list[Any] = response.tool_calls()
    return text, calls, response.usage(), response.resolved_model
