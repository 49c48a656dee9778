"""Embedding models: text to vectors, for plugins that search by meaning.

A plugin offers embedding model providers through ``toolang_register_embedding_models``
(``register(name, factory)``, like model providers); a plugin that needs one (a memory
plugin's semantic recall) names it in its settings as ``"<provider>"`` or
``"<provider>/<model id>"`` and gets it from :class:`EmbeddingModels`, the runtime's
``embedding_models`` service (``context.service("embedding_models")``).

``embed`` is synchronous: its callers (memory plugins) already run their recall and
their writes in a worker thread, next to the database statements the vectors go with,
and the libraries that compute embeddings (llm's ``embed_multi``, local encoders) are
blocking. A model that talks to a remote service blocks its caller's worker thread,
never the event loop.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from toolang_core.errors import ToolangError
from toolang_core.models.spec import model_spec_problem

if TYPE_CHECKING:
    from toolang_core.runtime_parts import CoreRuntime

KIND: Final = "embedding model"
"""The component kind of ``toolang_register_embedding_models`` registrations."""


class EmbeddingError(ToolangError):
    """An embedding model could not be found, or failed to embed; the message names it."""


class EmbeddingModel(Protocol):
    """One embedding model: each text becomes a vector of ``dimensions`` floats.

    Texts that mean the same thing get vectors pointing the same way (a high cosine
    similarity). ``embed`` returns one vector per text, in order, each of exactly
    ``dimensions`` floats; it raises on failure (an :class:`EmbeddingError` naming the
    model, or the library's own error). It may be called from several threads at once.
    """

    @property
    def dimensions(self) -> int:
        """How many floats each vector has (a model may embed a short text once, on
        first use, to find out)."""
        ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text of ``texts``, in order."""
        ...


class EmbeddingProvider(Protocol):
    """What a ``toolang_register_embedding_models`` factory returns."""

    def embedding_model(self, model_id: str | None) -> EmbeddingModel:
        """The embedding model with this id (``None``: the provider's default).

        :raises EmbeddingError: for an unknown id, naming the ids that exist if it can.
        """
        ...


class EmbeddingModels:
    """The runtime's embedding models by name (the ``embedding_models`` service).

    Each provider is built once, on first use, with its plugin's context; each model
    once per name. Safe to use from several threads.
    """

    def __init__(self, runtime: CoreRuntime) -> None:
        self.runtime = runtime
        self._providers: dict[str, Any] = {}
        self._models: dict[str, EmbeddingModel] = {}
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        """The registered provider names, sorted."""
        return sorted(self.runtime.components.of_kind(KIND))

    def get(self, spec: str, *, wanted_by: str = "") -> EmbeddingModel:
        """The embedding model named ``spec`` (``"provider"`` or ``"provider/model id"``).

        :raises EmbeddingError: naming ``spec``, who asked (``wanted_by``, e.g. a
            settings key) and the providers installed, when there is no such provider
            or the provider has no such model.
        """
        with self._lock:
            found = self._models.get(spec)
            if found is None:
                found = self._models[spec] = self._resolve(spec, wanted_by)
            return found

    def _resolve(self, spec: str, wanted_by: str) -> EmbeddingModel:
        who = f" (asked for by {wanted_by})" if wanted_by else ""
        if problem := model_spec_problem(spec):
            raise EmbeddingError(f"embedding model {spec[:60]!r}{who}: {problem}")
        provider_name, _, model_id = spec.partition("/")
        provider = self._providers.get(provider_name)
        if provider is None:
            registration = self.runtime.components.of_kind(KIND).get(provider_name)
            if registration is None:
                installed = ", ".join(self.names()) or "none"
                raise EmbeddingError(
                    f"no embedding model provider {provider_name!r} for embedding model "
                    f"{spec!r}{who}; installed providers: {installed}. Install one (e.g. "
                    "toolang-model-llm, whose provider is 'llm': 'llm/<llm embedding model "
                    "id>')"
                )
            provider = registration.factory(self.runtime.plugin_context(registration.plugin))
            self._providers[provider_name] = provider
        try:
            model: EmbeddingModel = provider.embedding_model(model_id or None)
        except EmbeddingError as exc:
            raise EmbeddingError(f"{exc}{who}") from None
        return model
