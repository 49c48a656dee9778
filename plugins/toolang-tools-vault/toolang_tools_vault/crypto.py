"""``crypto_hash``, ``crypto_encrypt`` / ``crypto_decrypt`` (AES-256-GCM) and
``crypto_sign`` / ``crypto_verify`` (Ed25519), with the keys held in the vault.

A key is made on its first use under its name, in the caller's scope (owner and
agent), and never leaves the vault: the tools return ciphertexts, signatures and public
keys only.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from typing import Any, Literal

from toolang_core import ToolCallContext
from toolang_tools_vault.common import runtime_of, scope_of
from toolang_tools_vault.errors import VaultError
from toolang_tools_vault.vault import NONCE_BYTES, Scope, Vault, open_vault

Algorithm = Literal["sha256", "sha512", "sha3_256", "blake2b"]
VERSION = b"\x01"
"""The first byte of a ciphertext: its layout (version, nonce, AES-GCM output)."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


def _unb64(text: str, param: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text.strip().encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise VaultError(
            f"{param}: expected URL-safe base64, as the vault's tools return"
        ) from None


def crypto_hash(text: str, algorithm: Algorithm = "sha256") -> dict[str, Any]:
    """The hex digest of a text (UTF-8).

    :param text: what to hash
    :param algorithm: sha256, sha512, sha3_256 or blake2b
    """
    return {"algorithm": algorithm, "hex": hashlib.new(algorithm, text.encode()).hexdigest()}


def _aes_key(vault: Vault, scope: Scope, name: str) -> bytes:
    key = vault.get(scope, "aes", name)
    if key is None:
        key = os.urandom(32)
        vault.put(scope, "aes", name, key)
    return key


def _message_aad(scope: Scope, name: str) -> bytes:
    return "\0".join(("toolang-vault message", scope.owner, scope.agent, name)).encode()


def crypto_encrypt(
    plaintext: str, key_name: str = "default", context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Encrypt a text with one of your vault's keys (AES-256-GCM; the key is made on
    first use and never leaves the vault).

    :param plaintext: the text to encrypt
    :param key_name: which of your keys
    """
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    scope = scope_of(context)
    with open_vault(runtime_of(context)) as vault:
        key = _aes_key(vault, scope, key_name)
    nonce = os.urandom(NONCE_BYTES)
    sealed = AESGCM(key).encrypt(nonce, plaintext.encode(), _message_aad(scope, key_name))
    return {"key_name": key_name, "ciphertext": _b64(VERSION + nonce + sealed)}


def crypto_decrypt(
    ciphertext: str, key_name: str = "default", context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Decrypt a ciphertext crypto_encrypt made with one of your keys.

    :param ciphertext: what crypto_encrypt returned
    :param key_name: the key it was encrypted with
    """
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    scope = scope_of(context)
    data = _unb64(ciphertext, "ciphertext")
    if len(data) < 1 + NONCE_BYTES + 16 or data[:1] != VERSION:
        raise VaultError("ciphertext: not a ciphertext of crypto_encrypt (too short or unknown)")
    with open_vault(runtime_of(context)) as vault:
        key = vault.get(scope, "aes", key_name)
    if key is None:
        raise VaultError(f"key_name: you have no key {key_name!r}; nothing was decrypted")
    nonce, sealed = data[1 : 1 + NONCE_BYTES], data[1 + NONCE_BYTES :]
    try:
        plain = AESGCM(key).decrypt(nonce, sealed, _message_aad(scope, key_name))
    except InvalidTag:
        raise VaultError(
            f"ciphertext: does not decrypt with your key {key_name!r} (another key, or "
            "altered); nothing was decrypted"
        ) from None
    return {"key_name": key_name, "plaintext": plain.decode("utf-8", errors="replace")}


def _signing_key(vault: Vault, scope: Scope, name: str) -> Any:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    seed = vault.get(scope, "ed25519", name)
    if seed is None:
        seed = os.urandom(32)
        vault.put(scope, "ed25519", name, seed)
    return Ed25519PrivateKey.from_private_bytes(seed)


def _public(private: Any) -> str:
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return _b64(private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))


def crypto_sign(
    message: str, key_name: str = "default", context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Sign a text with one of your vault's Ed25519 keys (made on first use); returns
    the signature and the public key to verify it with.

    :param message: the text to sign
    :param key_name: which of your signing keys
    """
    scope = scope_of(context)
    with open_vault(runtime_of(context)) as vault:
        private = _signing_key(vault, scope, key_name)
    signature = private.sign(message.encode())
    return {"key_name": key_name, "signature": _b64(signature), "public_key": _public(private)}


def crypto_verify(
    message: str,
    signature: str,
    public_key: str | None = None,
    key_name: str = "default",
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Check an Ed25519 signature of a text: against a public key if given, else
    against your vault key ``key_name``.

    :param message: the signed text
    :param signature: the signature (URL-safe base64, as crypto_sign returns)
    :param public_key: the signer's public key (URL-safe base64); leave out for your own key
    :param key_name: your key to check against when no public key is given
    """
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    raw_signature = _unb64(signature, "signature")
    if public_key is not None:
        raw = _unb64(public_key, "public_key")
        if len(raw) != 32:
            raise VaultError(f"public_key: expected 32 bytes, found {len(raw)}")
        verifier = Ed25519PublicKey.from_public_bytes(raw)
    else:
        scope = scope_of(context)
        with open_vault(runtime_of(context)) as vault:
            seed = vault.get(scope, "ed25519", key_name)
        if seed is None:
            raise VaultError(f"key_name: you have no signing key {key_name!r}")
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        verifier = Ed25519PrivateKey.from_private_bytes(seed).public_key()
    try:
        verifier.verify(raw_signature, message.encode())
    except InvalidSignature:
        return {"valid": False}
    return {"valid": True}
