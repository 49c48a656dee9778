"""The encrypted store: items of a kind (``secret``, ``aes``, ``ed25519``) by owner,
agent and name, each sealed with AES-256-GCM under the vault's key.

The database (``<home>/plugins/tools-vault.db``) holds ciphertext, nonces, names and
times; the key comes from :mod:`.keys` and is checked against the fingerprint the vault
was made with before anything is decrypted.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final, Literal

import attrs

from toolang_tools_vault.errors import VaultError
from toolang_tools_vault.keys import key_id, load_key
from toolang_tools_vault.settings import NAME, VaultSettings

if TYPE_CHECKING:
    from sqlite_utils import Database

    from toolang_core import RuntimeView

Kind = Literal["secret", "aes", "ed25519"]
NONCE_BYTES: Final = 12


@attrs.frozen
class Scope:
    """Whose items a call may touch: the turn's owner and the calling agent."""

    owner: str
    agent: str


@attrs.frozen
class Listed:
    name: str
    created_at: float
    updated_at: float


def _aad(scope: Scope, kind: str, name: str) -> bytes:
    return "\0".join(("toolang-vault", scope.owner, scope.agent, kind, name)).encode()


class Vault:
    """One runtime's vault: its database and its key (checked once, when opened)."""

    def __init__(self, db: Database, key: bytes, *, check_only: bool = False) -> None:
        """``check_only``: a read-only look (the redaction detector's) that never records
        the key's fingerprint in a new vault."""
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self.db = db
        self._aead = AESGCM(key)
        self._check(key_id(key), record=not check_only)

    def _check(self, found: str, *, record: bool) -> None:
        row = self.db.execute("SELECT value FROM vault_meta WHERE name = 'key_id'").fetchone()
        if row is None:
            if not record:
                return
            with self.db.conn:
                self.db.execute(
                    "INSERT OR IGNORE INTO vault_meta (name, value) VALUES ('key_id', ?)", [found]
                )
            return
        if row[0] != found:
            raise VaultError(
                f"wrong vault key: this vault was sealed with key {row[0]}, the key given is "
                f"{found} (fingerprints, not keys); check [plugins.{NAME}] key / key_file "
                "or the keyring entry. Nothing was decrypted"
            )

    def put(self, scope: Scope, kind: Kind, name: str, plaintext: bytes) -> bool:
        """Seal and keep ``plaintext`` (replacing the item); whether it is new."""
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, plaintext, _aad(scope, kind, name))
        now = time.time()
        with self.db.conn:
            existed = self._row(scope, kind, name) is not None
            self.db.execute(
                "INSERT INTO vault_items (owner, agent, kind, name, nonce, ciphertext, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (owner, agent, kind, name) DO UPDATE SET nonce = excluded.nonce, "
                "ciphertext = excluded.ciphertext, updated_at = excluded.updated_at",
                [scope.owner, scope.agent, kind, name, nonce, sealed, now, now],
            )
        return not existed

    def get(self, scope: Scope, kind: Kind, name: str) -> bytes | None:
        """The item's plaintext, ``None`` when the scope holds none by that name."""
        row = self._row(scope, kind, name)
        if row is None:
            return None
        return self._open(scope, kind, name, row[0], row[1])

    def _open(self, scope: Scope, kind: str, name: str, nonce: bytes, sealed: bytes) -> bytes:
        from cryptography.exceptions import InvalidTag

        try:
            return self._aead.decrypt(nonce, sealed, _aad(scope, kind, name))
        except InvalidTag:
            raise VaultError(
                f"{kind} {name!r} cannot be decrypted with this key (a wrong key, or its "
                "row was altered or moved); nothing was decrypted"
            ) from None

    def _row(self, scope: Scope, kind: str, name: str) -> tuple[bytes, bytes] | None:
        row = self.db.execute(
            "SELECT nonce, ciphertext FROM vault_items "
            "WHERE owner = ? AND agent = ? AND kind = ? AND name = ?",
            [scope.owner, scope.agent, kind, name],
        ).fetchone()
        return None if row is None else (bytes(row[0]), bytes(row[1]))

    def names(self, scope: Scope, kind: Kind) -> list[Listed]:
        rows = self.db.execute(
            "SELECT name, created_at, updated_at FROM vault_items "
            "WHERE owner = ? AND agent = ? AND kind = ? ORDER BY name",
            [scope.owner, scope.agent, kind],
        ).fetchall()
        return [Listed(*row) for row in rows]

    def delete(self, scope: Scope, kind: Kind, name: str) -> bool:
        with self.db.conn:
            cursor = self.db.execute(
                "DELETE FROM vault_items WHERE owner = ? AND agent = ? AND kind = ? AND name = ?",
                [scope.owner, scope.agent, kind, name],
            )
        return cursor.rowcount > 0

    def every_secret(self) -> Iterator[bytes]:
        """Every secret of every scope, decrypted: what the redaction policy must know."""
        rows = self.db.execute(
            "SELECT owner, agent, name, nonce, ciphertext FROM vault_items WHERE kind = 'secret'"
        ).fetchall()
        for owner, agent, name, nonce, sealed in rows:
            yield self._open(Scope(owner, agent), "secret", name, bytes(nonce), bytes(sealed))


_LOCKS = threading.Lock()


@contextmanager
def open_vault(runtime: RuntimeView) -> Iterator[Vault]:
    """The runtime's vault, one caller at a time (tools run in worker threads and share
    the runtime's one connection). The key is loaded and checked on first use, and the
    runtime's redaction policy is told every secret the vault holds.

    :raises VaultError: no key, an unreadable key, or the wrong key.
    """
    from toolang_tools_vault.schema import MIGRATIONS

    with _LOCKS:
        lock = runtime.plugin_state(f"{NAME}:lock", threading.Lock)
    with lock:
        # The key is read once per runtime; the database is asked for on every use (the
        # runtime closes its plugin databases when a serve ends, and opens them again).
        state: dict[str, bytes] = runtime.plugin_state(f"{NAME}:key", dict)
        key = state.get("key")
        if key is None:
            key = load_key(runtime.config, runtime.settings_for(NAME, VaultSettings))
        vault = Vault(runtime.plugin_database(NAME, MIGRATIONS), key)
        if "key" not in state:
            # Every secret it holds is masked wherever text is stored or shown, from now on.
            runtime.redaction.mask_values(s.decode("utf-8") for s in vault.every_secret())
            state["key"] = key
        yield vault
