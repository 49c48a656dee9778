"""The vault's key: from the settings, a key file outside the home, or the OS keyring.

The key never lives beside the data: a ``key_file`` inside the toolang home (where the
encrypted database is) is refused, and nothing here writes the key anywhere but the
keyring.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from toolang_core import hide_from_tools
from toolang_tools_vault.errors import VaultError
from toolang_tools_vault.settings import NAME, VaultSettings

if TYPE_CHECKING:
    from toolang_core import ToolangConfig

SECTION = f"[plugins.{NAME}]"
KEYRING_USER = "vault-key"
HOW = (
    f'set {SECTION} key (e.g. key = "${{TOOLANG_VAULT_KEY}}") or key_file, or install '
    "the keyring package (pip install 'toolang-tools-vault[keyring]') with a working OS "
    'keyring; make a key with: python -c "from cryptography.fernet import Fernet; '
    'print(Fernet.generate_key().decode())"'
)


def decode_key(text: str, where: str) -> bytes:
    """32 bytes from their base64 (URL-safe or standard) form; an error naming ``where``."""
    cleaned = text.strip()
    try:
        raw = base64.urlsafe_b64decode(cleaned.replace("+", "-").replace("/", "_"))
    except (binascii.Error, ValueError):
        raise VaultError(
            f"{where}: expected 32 bytes in base64, found text that is not base64"
        ) from None
    if len(raw) != 32:
        raise VaultError(f"{where}: expected 32 bytes in base64, found {len(raw)} bytes")
    return raw


def key_id(key: bytes) -> str:
    """A fingerprint of ``key`` kept with the data to tell a wrong key (never the key)."""
    return hashlib.sha256(b"toolang-vault key id\0" + key).hexdigest()[:16]


def _inside(path: Path, home: Path) -> bool:
    path, home = path.resolve(), home.resolve()
    return path == home or home in path.parents


def load_key(config: ToolangConfig, settings: VaultSettings) -> bytes:
    """The vault's key, from the first of: ``key``, ``key_file``, the OS keyring.

    :raises VaultError: naming the setting that is wrong, or saying how to give a key.
    """
    if settings.key is not None:
        return decode_key(settings.key.reveal(), f"{SECTION} key")
    if settings.key_file is not None:
        path = settings.key_file
        if not path.is_absolute():
            path = Path(config.base_dir) / path
        if _inside(path, Path(config.home)):
            raise VaultError(
                f"{SECTION} key_file: {path} is inside the toolang home, beside the data it "
                "protects; keep the key elsewhere"
            )
        hide_from_tools(path)  # outside the home by rule: the sandbox would not hide it
        try:
            text = path.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError) as exc:
            raise VaultError(f"{SECTION} key_file: cannot read {path}: {exc}") from None
        return decode_key(text, f"{SECTION} key_file {path}")
    if settings.use_keyring:
        found = _from_keyring(settings.keyring_service)
        if found is not None:
            return found
    raise VaultError(f"the vault has no key: {HOW}")


def _from_keyring(service: str) -> bytes | None:
    """The key kept in the OS keyring (made and kept there on first use); ``None`` when
    the keyring package or a usable keyring backend is missing."""
    try:
        import keyring
        from keyring.errors import KeyringError
    except ImportError:
        return None
    try:
        text = keyring.get_password(service, KEYRING_USER)
        if text is None:
            from cryptography.fernet import Fernet

            text = Fernet.generate_key().decode("ascii")
            keyring.set_password(service, KEYRING_USER, text)
    except KeyringError:
        return None
    return decode_key(text, f"the OS keyring entry {service}/{KEYRING_USER}")
