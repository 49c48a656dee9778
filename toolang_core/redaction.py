"""Keep secrets out of logs and traces.

Two rules: a value stored under a secret-sounding key (``password``, ``api_key``,
``token`` …) is masked whole; and inside any string, credentials in URLs and
well-known API-key shapes are masked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

MASK: Final = "********"

_SECRET_KEY = re.compile(
    r"(pass(word|wd|phrase)?|secret|token|api[_-]?key|apikey|authorization|auth|"
    r"credential|private[_-]?key|cookie|session[_-]?key)$",
    re.IGNORECASE,
)
_URL_CREDENTIALS = re.compile(
    r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^:/@\s]+):(?P<pw>[^@/\s]+)@", re.IGNORECASE
)
_KEY_SHAPES = re.compile(
    r"\b("
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}"  # OpenAI / Anthropic style keys
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub tokens
    r"|xox[abpr]-[A-Za-z0-9-]{10,}"  # Slack tokens
    r"|AKIA[0-9A-Z]{16}"  # AWS access key ids
    r"|AIza[0-9A-Za-z_-]{30,}"  # Google API keys
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JWTs
    r")"
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")


def is_secret_key(key: str) -> bool:
    """Whether a mapping key names a secret (``api_key``, ``DB_PASSWORD``, …)."""
    return bool(_SECRET_KEY.search(key))


# Every pattern above contains one of these (lower-cased). Substring tests run at C
# speed; a regex alternation of the same would cost several times more per character.
_TRIGGERS: Final = ("://", "sk-", "gh", "xox", "akia", "aiza", "eyj", "bearer", "basic")


def _maybe_secret(text: str) -> bool:
    lowered = text.lower()
    return any(trigger in lowered for trigger in _TRIGGERS)


def redact_text(text: str) -> str:
    """Mask URL credentials, bearer tokens and well-known API-key shapes in ``text``."""
    if not _maybe_secret(text):
        return text
    text = _URL_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
    return _KEY_SHAPES.sub(MASK, text)


def redact(value: Any, *, key: str | None = None, _depth: int = 0) -> Any:
    """Return ``value`` with secrets masked, recursing through mappings and lists."""
    if key is not None and is_secret_key(key) and value not in (None, "", MASK):
        return MASK
    if isinstance(value, str):
        return redact_text(value)
    if _depth > 20:
        return value
    if isinstance(value, Mapping):
        return {k: redact(v, key=str(k), _depth=_depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact(v, _depth=_depth + 1) for v in value)
    return value
