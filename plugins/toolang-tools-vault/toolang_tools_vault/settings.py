"""``[plugins.tools-vault]``: kept apart so registering the plugin imports little."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import attrs

from toolang_core import Secret

NAME: Final = "tools-vault"
"""The entry-point name: the settings section, the state key and the database file."""


@attrs.frozen
class VaultSettings:
    """``[plugins.tools-vault]``: where the vault's key comes from, first found wins.

    ``key`` — the key itself (write ``"${TOOLANG_VAULT_KEY}"`` to take it from the
    environment); ``key_file`` — a file holding it (relative to toolang.toml), never
    inside the toolang home, where the encrypted data is; else the OS keyring through
    the ``keyring`` package, entry ``keyring_service`` / ``vault-key`` (made on first
    use). A key is 32 random bytes, base64 (``Fernet.generate_key()``'s form).
    """

    key: Secret | None = None
    key_file: Path | None = None
    keyring_service: str = "toolang-vault"
    use_keyring: bool = True
