"""The vault's tools with their JSON Schemas.

Schemas come from the functions' hints and docstrings, tightened here (lengths, name
patterns, no unknown keys) so bad parameters are refused before any hook runs. Every
tool is idempotent: a set or a delete repeated does no more, and a key is made once per
name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from toolang_core import Tool
from toolang_tools_vault import crypto, secrets

NAME = {"minLength": 1, "maxLength": 64, "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"}
TEXT = {"maxLength": 100_000}
BASE64 = {"minLength": 1, "maxLength": 200_000, "pattern": r"^[A-Za-z0-9_=-]+$"}


def constrained(
    function: Callable[..., Any],
    *,
    secret_params: tuple[str, ...] = (),
    **properties: Mapping[str, Any],
) -> Tool:
    """An idempotent tool of ``function`` with extra JSON Schema keywords per parameter."""
    tool = Tool.from_function(function, idempotent=True, secret_params=secret_params)
    return tool.constrain(**properties)


TOOLS = (
    constrained(
        secrets.secrets_set,
        secret_params=("secret",),
        name=NAME,
        secret={"minLength": 8, "maxLength": 10_000},
    ),
    constrained(secrets.secrets_get, name=NAME),
    constrained(secrets.secrets_list),
    constrained(secrets.secrets_delete, name=NAME),
    constrained(crypto.crypto_hash, text=TEXT),
    constrained(crypto.crypto_encrypt, plaintext=TEXT, key_name=NAME),
    constrained(crypto.crypto_decrypt, ciphertext=BASE64, key_name=NAME),
    constrained(crypto.crypto_sign, message=TEXT, key_name=NAME),
    constrained(
        crypto.crypto_verify,
        message=TEXT,
        signature=BASE64,
        public_key=BASE64,
        key_name=NAME,
    ),
)
