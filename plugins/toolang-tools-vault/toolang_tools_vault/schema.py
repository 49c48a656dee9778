"""The plugin's own tables, as a ``sqlite_utils.Migrations`` set (append, never edit)."""

from __future__ import annotations

from typing import Final

from sqlite_utils import Database, Migrations

from toolang_tools_vault.settings import NAME

MIGRATIONS: Final = Migrations(NAME)


@MIGRATIONS()
def m001_tables(db: Database) -> None:
    # Every item is AES-GCM ciphertext bound (associated data) to its owner, agent, kind
    # and name: a row copied to another scope does not decrypt.
    db.execute(
        """
        CREATE TABLE vault_items (
            owner TEXT NOT NULL,
            agent TEXT NOT NULL,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            nonce BLOB NOT NULL,
            ciphertext BLOB NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (owner, agent, kind, name)
        )
        """
    )
    # The key's fingerprint (never the key): a wrong key is told before any decryption.
    db.execute("CREATE TABLE vault_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
