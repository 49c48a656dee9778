"""The vault's one error type."""

from __future__ import annotations


class VaultError(ValueError):
    """A vault tool cannot do what it was asked; the message says what to change and
    never holds a secret's value."""
