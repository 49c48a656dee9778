"""toolang-tools-vault: the vault role's tools.

``secrets_set`` / ``secrets_get`` / ``secrets_list`` / ``secrets_delete`` keep secrets
sealed (AES-256-GCM) in the plugin's database, scoped by the calling turn's owner and
agent; ``crypto_hash``, ``crypto_encrypt`` / ``crypto_decrypt`` and ``crypto_sign`` /
``crypto_verify`` (Ed25519) use keys held in the vault. The key is never stored beside
the data (settings, a key file outside the home, or the OS keyring). Every value the
vault holds is handed to the runtime's redaction policy, so it is masked wherever text
is stored or shown. This module stays import-light: the tools load on registration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import structlog

from toolang_core import hookimpl
from toolang_tools_vault.errors import VaultError
from toolang_tools_vault.settings import NAME, VaultSettings

if TYPE_CHECKING:
    from toolang_core import RegisterFactory, RegisterSettings, RegisterTool, RuntimeView

__all__ = ["NAME", "VaultError", "VaultSettings"]

log = structlog.get_logger(__name__)


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(VaultSettings)


@hookimpl
def toolang_register_redactors(register: RegisterFactory) -> None:
    from toolang_tools_vault.redactor import known_secrets

    register("secrets", known_secrets, description="every secret the vault holds")


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    from toolang_tools_vault.tools import TOOLS

    for tool in TOOLS:
        register(tool)


@hookimpl
def toolang_startup(runtime: RuntimeView) -> None:
    """Open the vault before the first turn, so the redaction policy masks every secret
    it holds from the start — in a message that repeats one, too. Without a key (or
    with a wrong one) the runtime still starts; the tools then say what is wrong.
    Before the vault's database exists this does nothing."""
    from pathlib import Path

    from toolang_tools_vault.vault import open_vault

    if not (Path(runtime.config.home) / "plugins" / f"{NAME}.db").exists():
        return  # nothing to mask yet; no key is made (in a keyring) before a tool needs one
    try:
        with open_vault(runtime):
            pass
    except VaultError as exc:
        log.warning("vault.unavailable", plugin=NAME, error=str(exc))
