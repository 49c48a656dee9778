"""The ``llm`` embedding model provider: llm's embedding models as toolang
:class:`~toolang_core.models.EmbeddingModel`s (``llm/<embedding model id or alias>``,
``llm`` alone: llm's default embedding model, ``llm embed-models default``).

llm is imported when a model is first asked for, never at registration. ``embed`` calls
``embed_multi`` (llm batches by the model's ``batch_size``) and blocks: toolang's callers
run it in a worker thread. A model that needs a key (a remote service) is a real model
call, refused while ``TOOLANG_ALLOW_MODEL_REQUESTS=0`` (toolang's pytest plugin) unless
listed in ``[plugins.model-llm] offline_models``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from toolang_core.models import EmbeddingError
from toolang_model_llm import errors
from toolang_model_llm.settings import LlmSettings


class LlmEmbeddingProvider:
    """Hands out :class:`LlmEmbeddingModel` objects by llm embedding model id."""

    def __init__(self, settings: LlmSettings) -> None:
        self.settings = settings

    def embedding_model(self, model_id: str | None) -> LlmEmbeddingModel:
        """llm's embedding model ``model_id`` (``None``: llm's default one).

        :raises EmbeddingError: no such model (naming those llm has), or no default.
        """
        import llm as untyped

        llm: Any = untyped  # its functions are unannotated
        if model_id is None:
            model_id = llm.get_default_embedding_model()
            if model_id is None:
                raise EmbeddingError(
                    "llm has no default embedding model: name one as 'llm/<id>' or set it "
                    f"with `llm embed-models default <id>`; llm has: {_known(llm)}"
                )
        try:
            model = llm.get_embedding_model(model_id)
        except llm.UnknownModelError:
            raise EmbeddingError(
                f"llm has no embedding model {model_id!r}; it has: {_known(llm)} "
                "(`llm embed-models` lists them; plugins such as llm-sentence-transformers "
                "add local ones)"
            ) from None
        return LlmEmbeddingModel(model, self.settings)


def _known(llm: Any) -> str:
    names = sorted(str(m.model_id) for m in llm.get_embedding_models())
    return ", ".join(names[:20]) or "none"


class LlmEmbeddingModel:
    """One llm embedding model. ``dimensions`` embeds a short text once (llm's models
    do not state their size)."""

    def __init__(self, model: Any, settings: LlmSettings) -> None:
        self.model = model
        self.model_id = str(model.model_id)
        self._remote = bool(getattr(model, "needs_key", None)) and (
            self.model_id not in settings.offline_models
        )
        self._dimensions: int | None = None
        self._lock = threading.Lock()

    @property
    def dimensions(self) -> int:
        with self._lock:
            if self._dimensions is None:
                self._dimensions = len(self.embed(["dimensions"])[0])
            return self._dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, through llm's ``embed_multi``.

        :raises EmbeddingError: the model failed (or real calls are blocked), naming it.
        """
        if self._remote:
            try:
                errors.check_real_calls_allowed(self.model_id)
            except Exception as exc:
                raise EmbeddingError(str(exc)) from None
        try:
            return [list(map(float, v)) for v in self.model.embed_multi(list(texts))]
        except Exception as exc:
            raise EmbeddingError(
                f"llm embedding model {self.model_id!r} failed: {type(exc).__name__}: "
                f"{errors.one_line(str(exc))}"
            ) from exc
