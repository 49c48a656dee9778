"""toolang-model-llm: every model of Simon Willison's ``llm`` library answers turns.

Agents name a model ``llm/<llm model id or alias>`` (``llm/gpt-4o-mini``, ``llm/echo``);
plain ``llm`` means llm's own default model. llm's embedding models are embedding model
provider ``llm`` too (``llm/3-small``: :mod:`.embeddings`). ``llm`` is imported only when
a turn first needs a model, so registering this plugin costs nothing at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core import RegisterFactory, RegisterSettings, hookimpl
from toolang_model_llm.settings import LlmSettings

if TYPE_CHECKING:
    from toolang_core import PluginContext
    from toolang_model_llm.embeddings import LlmEmbeddingProvider
    from toolang_model_llm.provider import LlmProvider

NAME = "model-llm"
PROVIDER = "llm"

__all__ = ["NAME", "PROVIDER", "LlmSettings"]


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(LlmSettings)


@hookimpl
def toolang_register_models(register: RegisterFactory) -> None:
    register(
        PROVIDER,
        _provider,
        description="any model of the llm library (OpenAI, Anthropic, Gemini, Ollama, …)",
    )


def _provider(context: PluginContext) -> LlmProvider:
    from toolang_model_llm.provider import LlmProvider

    return LlmProvider(_settings(context))


@hookimpl
def toolang_register_embedding_models(register: RegisterFactory) -> None:
    register(
        PROVIDER,
        _embedding_provider,
        description="any embedding model of the llm library (OpenAI, sentence-transformers, …)",
    )


def _embedding_provider(context: PluginContext) -> LlmEmbeddingProvider:
    from toolang_model_llm.embeddings import LlmEmbeddingProvider

    return LlmEmbeddingProvider(_settings(context))


def _settings(context: PluginContext) -> LlmSettings:
    """``[plugins.model-llm]`` as both providers read it (the defaults when it is absent).

    The providers' modules are imported by their factories, not here: ``llm`` is imported
    only when a turn first needs a model."""
    return context.settings if isinstance(context.settings, LlmSettings) else LlmSettings()
