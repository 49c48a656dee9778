"""``secrets_set`` / ``secrets_get`` / ``secrets_list`` / ``secrets_delete``.

A secret is kept sealed in the vault under the calling turn's owner and agent. Its value
reaches a tool call's result only through ``secrets_get``; the runtime's redaction
policy is told every value the vault holds, so wherever a turn is recorded (steps,
traces, history, memory, the plugins' databases, logs) it is masked.
"""

from __future__ import annotations

from typing import Any

from toolang_core import ToolCallContext
from toolang_tools_vault.common import runtime_of, scope_of
from toolang_tools_vault.errors import VaultError
from toolang_tools_vault.vault import open_vault


def secrets_set(name: str, secret: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """Keep a secret (a password, an API key) in the vault under a name, encrypted;
    replaces a secret of the same name.

    :param name: the secret's name (letters, digits, '.', '_', '-')
    :param secret: the value to keep (at least 8 characters)
    """
    scope = scope_of(context)
    runtime = runtime_of(context)
    runtime.redaction.mask_values([secret])  # before anything records the result
    with open_vault(runtime) as vault:
        created = vault.put(scope, "secret", name, secret.encode("utf-8"))
    return {"name": name, "stored": True, "replaced": not created}


def secrets_get(name: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """The value of a secret kept in the vault. Ask only when the value itself is
    needed: it is masked wherever the conversation is recorded.

    :param name: the secret's name
    """
    scope = scope_of(context)
    runtime = runtime_of(context)
    with open_vault(runtime) as vault:
        found = vault.get(scope, "secret", name)
        known = [item.name for item in vault.names(scope, "secret")]
    if found is None:
        raise VaultError(
            f"name: no secret {name!r} in your vault (yours: {', '.join(known) or 'none'})"
        )
    value = found.decode("utf-8")
    runtime.redaction.mask_values([value])
    return {"name": name, "value": value}


def secrets_list(context: ToolCallContext | None = None) -> list[dict[str, Any]]:
    """The names of the secrets in your vault, with when each was set (never values)."""
    scope = scope_of(context)
    with open_vault(runtime_of(context)) as vault:
        return [
            {"name": item.name, "created_at": item.created_at, "updated_at": item.updated_at}
            for item in vault.names(scope, "secret")
        ]


def secrets_delete(name: str, context: ToolCallContext | None = None) -> dict[str, Any]:
    """Remove a secret from the vault.

    :param name: the secret's name
    """
    scope = scope_of(context)
    with open_vault(runtime_of(context)) as vault:
        deleted = vault.delete(scope, "secret", name)
    return {"name": name, "deleted": deleted}
