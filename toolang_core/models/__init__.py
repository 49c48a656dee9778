"""Models: the contract between the agent loop and the plugins that answer turns."""

from toolang_core.models.guard import check_real_calls_allowed, real_calls_allowed
from toolang_core.models.types import (
    Message,
    Model,
    ModelError,
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ToolSpec,
)

__all__ = [
    "Message",
    "Model",
    "ModelError",
    "ModelProvider",
    "ModelRequest",
    "ModelResponse",
    "ToolSpec",
    "check_real_calls_allowed",
    "real_calls_allowed",
]
