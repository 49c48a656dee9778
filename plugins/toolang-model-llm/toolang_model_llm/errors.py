"""What went wrong, said to a person: llm's exceptions as toolang ``ModelError``s.

Messages are one line (the turn's error shows the first line) and pass through
``redact_text``: providers quote request details, and a key must never reach a trace.
"""

from __future__ import annotations

from typing import Any

from toolang_core import redact_text
from toolang_core.models import ModelError, real_calls_allowed

GUARD_ENV = "TOOLANG_ALLOW_MODEL_REQUESTS"  # toolang's switch (toolang_core.models)
_MAX_DETAIL = 500


def check_real_calls_allowed(model_id: str) -> None:
    """:raises ModelError: when real (networked, paid) model calls are blocked."""
    if not real_calls_allowed():
        raise ModelError(
            f"llm model {model_id!r}: real model calls are blocked ({GUARD_ENV}=0, set by "
            "toolang's pytest plugin); use llm/echo (llm-echo), list an offline model in "
            "[plugins.model-llm] offline_models, or set toolang_block_model_requests = false"
        )


def one_line(text: str) -> str:
    """``text`` on one line, clipped, with secrets masked."""
    flat = " ".join(redact_text(text).split())
    return flat if len(flat) <= _MAX_DETAIL else flat[: _MAX_DETAIL - 1] + "…"


def from_llm(exc: Exception, model: Any) -> ModelError:
    """A ``ModelError`` for ``exc``, raised by llm or a model plugin running ``model``."""
    import llm

    model_id = getattr(model, "model_id", "?")
    if isinstance(exc, llm.NeedsKeyException):
        return ModelError(needs_key_message(model, exc))
    if isinstance(exc, llm.ConversationNotSupported):
        return ModelError(
            f"llm model {model_id!r} takes single prompts only, not a conversation with "
            "history or tool results; choose a chat model"
        )
    detail = one_line(str(exc)) or "no message"
    return ModelError(f"llm model {model_id!r} failed: {type(exc).__name__}: {detail}")


def needs_key_message(model: Any, exc: Exception) -> str:
    model_id = getattr(model, "model_id", "?")
    alias: str | None = getattr(model, "needs_key", None)
    env: str | None = getattr(model, "key_env_var", None)
    if not alias:  # a plugin that raised it on its own: its message says which key
        return f"llm model {model_id!r} needs an API key: {one_line(str(exc))}"
    where = f"run `llm keys set {alias}`" + (f" or set {env}" if env else "")
    return f"llm model {model_id!r} needs an API key and none is set: {where}"
