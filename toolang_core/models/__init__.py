"""Models: the contract between the agent loop and the plugins that answer turns, and
embedding models (text to vectors) for plugins that search by meaning."""

from toolang_core.errors import (
    ModelAuthError,
    ModelConnectionError,
    ModelError,
    ModelErrorKind,
    ModelNotFound,
    ModelOverloaded,
    ModelRateLimited,
    ModelRefused,
    ModelServerError,
    ModelTimeout,
)
from toolang_core.models.embeddings import (
    EmbeddingError,
    EmbeddingModel,
    EmbeddingModels,
    EmbeddingProvider,
)
from toolang_core.models.guard import check_real_calls_allowed, real_calls_allowed
from toolang_core.models.types import (
    Message,
    Model,
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ToolSpec,
)

__all__ = [
    "EmbeddingError",
    "EmbeddingModel",
    "EmbeddingModels",
    "EmbeddingProvider",
    "Message",
    "Model",
    "ModelAuthError",
    "ModelConnectionError",
    "ModelError",
    "ModelErrorKind",
    "ModelNotFound",
    "ModelOverloaded",
    "ModelProvider",
    "ModelRateLimited",
    "ModelRefused",
    "ModelRequest",
    "ModelResponse",
    "ModelServerError",
    "ModelTimeout",
    "ToolSpec",
    "check_real_calls_allowed",
    "real_calls_allowed",
]
