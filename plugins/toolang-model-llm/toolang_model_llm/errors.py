"""What went wrong, said to a person: llm's exceptions as toolang ``ModelError``s.

Messages are one line (the turn's error shows the first line) and pass through
``redact_text``: providers quote request details, and a key must never reach a trace.
"""

from __future__ import annotations

from typing import Any

from toolang_core import redact_text
from toolang_core.models import ModelError, ModelErrorKind, real_calls_allowed

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
    """A ``ModelError`` for ``exc``, raised by llm or a model plugin running ``model``,
    of the kind :func:`classify` finds (the agent loop retries the transient ones)."""
    import llm

    model_id = getattr(model, "model_id", "?")
    if isinstance(exc, llm.NeedsKeyException):
        return ModelError(needs_key_message(model, exc), kind="auth")
    if isinstance(exc, llm.ConversationNotSupported):
        return ModelError(
            f"llm model {model_id!r} takes single prompts only, not a conversation with "
            "history or tool results; choose a chat model"
        )
    detail = one_line(str(exc)) or "no message"
    return ModelError(
        f"llm model {model_id!r} failed: {type(exc).__name__}: {detail}",
        kind=classify(exc),
        retry_after=retry_after(exc),
    )


_BY_STATUS: dict[int, ModelErrorKind] = {
    401: "auth",
    403: "auth",
    404: "not_found",
    408: "timeout",
    429: "rate_limit",
    503: "overloaded",
    529: "overloaded",
}
_NOT_RETRIED_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
_REFUSED_CODES = frozenset({"content_filter", "content_policy_violation"})


def classify(exc: BaseException) -> ModelErrorKind | None:
    """The kind of a model SDK's exception, or ``None`` (unclassified: never retried).

    llm's model plugins let their SDK's exceptions through; the SDKs llm's plugins use
    (openai, anthropic) name them alike and carry the HTTP status, so this goes by class
    names and ``status_code`` and imports no SDK. Conservative: what it does not
    recognise is left unclassified, and a 429 that says the quota or the bill is used
    up is not a rate limit (waiting does not help)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    code = getattr(exc, "code", None)
    if code in _NOT_RETRIED_CODES:
        return None
    if code in _REFUSED_CODES:
        return "refused"
    if names & {"APITimeoutError", "TimeoutException"} or isinstance(exc, TimeoutError):
        return "timeout"
    if names & {"APIConnectionError", "ConnectError"} or isinstance(exc, ConnectionError):
        return "connection"
    if "OverloadedError" in names:
        return "overloaded"
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and not isinstance(status, bool):
        if status in _BY_STATUS:
            return _BY_STATUS[status]
        if 500 <= status < 600:
            return "server"
    return None


def retry_after(exc: BaseException) -> float | None:
    """The seconds an HTTP error's ``Retry-After`` (or ``retry-after-ms``) asks for."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        if (seconds := headers.get("retry-after")) is not None:
            return max(0.0, float(seconds))
    except (TypeError, ValueError):  # an HTTP date, or garbage: the backoff decides
        return None
    return None


def needs_key_message(model: Any, exc: Exception) -> str:
    model_id = getattr(model, "model_id", "?")
    alias: str | None = getattr(model, "needs_key", None)
    env: str | None = getattr(model, "key_env_var", None)
    if not alias:  # a plugin that raised it on its own: its message says which key
        return f"llm model {model_id!r} needs an API key: {one_line(str(exc))}"
    where = f"run `llm keys set {alias}`" + (f" or set {env}" if env else "")
    return f"llm model {model_id!r} needs an API key and none is set: {where}"
