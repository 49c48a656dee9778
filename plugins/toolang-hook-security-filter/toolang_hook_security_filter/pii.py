"""Find and mask personal data and secrets in strings and JSON values.

Five kinds, each switchable in the settings (``pii_kinds``):

``email``
    ``name@example.com`` — not ``git@github.com:org/repo`` (an SSH address), not
    ``ssh://git@host``, not ``icon@2x.png``.
``phone``
    International numbers (``+44 20 7946 0958``, ``+15551234567``), North American
    ones (``(555) 123-4567``, ``555-123-4567``) and national numbers starting with 0
    and split into groups (``020 7946 0958``, ``01 42 68 53 00``, ``07911 123456``).
    Digit runs without a ``+`` or separators are left alone: they are far more often
    ids, timestamps or sizes than phone numbers.
``card``
    Payment card numbers: 13-19 digits, contiguous or in the printed groups (4-4-4-4,
    4-6-5 …), with an issuer prefix and a valid Luhn checksum; JSON integers too.
``iban``
    International bank account numbers: a known country, that country's length and a
    valid ISO 13616 mod-97 checksum, with or without the groups of four.
``secret``
    API keys and tokens of well-known shapes (OpenAI, Anthropic, GitHub, GitLab, Slack,
    Stripe, AWS, Google, Hugging Face, npm, PyPI, SendGrid, JWTs, HashiCorp Vault, Azure
    connection strings), an AWS secret access key beside its key id, PEM private keys,
    bearer and basic credentials, passwords in URLs, ``password=…``-style assignments,
    and the whole value under a mapping key that names a secret (``password``,
    ``api_key``, ``token`` … as :func:`toolang_core.is_secret_key` decides).

Checksums and shapes keep false positives down: a random 16-digit id is not a card
unless it also passes Luhn (one in ten does — see the README), a UUID or a git SHA is
no key shape.

Patterns are compiled when a :class:`Scrubber` is made (the runtime's redaction detector
makes it for the first text it masks), not at import; a key shape's pattern when a text
first holds its prefix.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Mapping
from typing import Any, Final, Literal

from toolang_core import is_secret_key
from toolang_hook_security_filter.finders import (
    KEY_SHAPES,
    MASKS,
    PROVIDER_KEY_MIN,
    Finder,
    Finders,
    card_valid,
)
from toolang_hook_security_filter.hints import trie_pattern

PiiKind = Literal["email", "phone", "card", "iban", "secret", "national_id"]
PII_KINDS: Final[tuple[PiiKind, ...]] = ("email", "phone", "card", "iban", "secret", "national_id")

SHORTEST_MASKED: Final = 6
"""No text shorter than this holds anything a :class:`Scrubber` masks."""

_LABELS = ("bearer", "basic", "pass", "pwd", "secret", "token", "key", "credential")
"""Words in the lowercased string without which no labelled credential is found."""


class Scrubber:
    """Masks the enabled ``kinds`` of personal data and counts what it masked.

    Counts go into the ``found`` counter the caller passes (kind → how many); the
    masked values themselves are never kept. Scrubbing masked text changes nothing.
    """

    def __init__(self, kinds: Collection[PiiKind] = PII_KINDS) -> None:
        self.kinds = frozenset(kinds)
        finders = Finders()
        self._seven_digits = finders.seven_digits
        self._secret = "secret" in self.kinds
        self._finders = finders
        self._shape_hint = re.compile(trie_pattern(KEY_SHAPES))
        self._label_hint = re.compile(trie_pattern(_LABELS))
        self._email = finders.emails if "email" in kinds else None
        # Secrets first: key shapes hold digit runs that look like other kinds.
        number_finders = {"iban": finders.ibans, "card": finders.cards, "phone": finders.phones}
        self._numbers = [(k, f) for k, f in number_finders.items() if k in self.kinds]
        from toolang_hook_security_filter.ids import IdFinder, ProviderKeyFinder

        self._ids = IdFinder() if "national_id" in self.kinds else None
        # Every id, phone, card and IBAN holds six digits or more: a text with fewer
        # (most are) is passed over with one look, not a look per kind.
        self._digit_kinds = self._ids is not None or bool(self._numbers)
        self._six_digits = finders.six_digits
        self._providers = ProviderKeyFinder() if self._secret else None
        # Mapping keys repeat (parameter and field names): remember the answers.
        self._key_facts = functools.lru_cache(maxsize=4096)(_key_facts)

    # -- strings -------------------------------------------------------------------------

    def scrub_text(self, text: str, found: dict[str, int]) -> str:
        """``text`` with every enabled kind masked; counts go into ``found``."""
        if len(text) < SHORTEST_MASKED:  # most strings are short
            return text
        if self._secret:
            text = self._scrub_secrets(text, found)
        if self._email is not None and "@" in text:
            text = _apply(self._email, "email", text, found)
        if self._digit_kinds and self._six_digits.match(text):
            if self._ids is not None:  # before phones: an SSN or a SIN looks like one
                text = _apply(self._ids, "national_id", text, found)
            if self._numbers and self._seven_digits.match(text):
                for kind, finder in self._numbers:
                    text = _apply(finder, kind, text, found)
        return text

    def _scrub_secrets(self, text: str, found: dict[str, int]) -> str:
        # An AWS secret key is found beside its key id, and the id is a key shape: a
        # text without a shape's prefix (most) holds neither, and costs one search.
        if self._shape_hint.search(text):
            # Before the key shapes, which mask the access key id that tells the secret.
            text = _apply(self._finders.aws_secret_keys, "secret", text, found)
            prefixes = set(self._shape_hint.findall(text))
            text = _apply(lambda t: self._finders.key_shapes(t, prefixes), "secret", text, found)
        if self._label_hint.search(text.lower()):
            text = _apply(self._finders.labelled, "secret", text, found)
        if "://" in text and "@" in text:
            text = _apply(self._finders.url_passwords, "secret", text, found)
        if self._providers is not None and len(text) >= PROVIDER_KEY_MIN:
            text = _apply(self._providers, "secret", text, found)
        return text

    # -- JSON values -----------------------------------------------------------------

    def scrub(self, value: Any, found: dict[str, int], *, _depth: int = 0) -> Any:
        """``value`` (any JSON value) with personal data masked in every string.

        Mapping keys are scrubbed too, and a whole value under a secret-naming key is
        masked. Returns ``value`` itself (the same object) when nothing was masked.
        """
        if isinstance(value, str):
            return self.scrub_text(value, found)
        if isinstance(value, int) and not isinstance(value, bool):
            return self._number(value, found)
        if _depth > _MAX_DEPTH:  # deeper than any real payload: mask it whole, not leak it
            _count(found, "secret")
            return MASKS["secret"]
        if isinstance(value, _MAPPINGS):
            return self._scrub_mapping(value, found, _depth)
        if isinstance(value, _SEQUENCES):
            items = [self.scrub(item, found, _depth=_depth + 1) for item in value]
            if all(new is old for new, old in zip(items, value, strict=True)):
                return value
            return items
        return value

    def _scrub_mapping(self, value: Mapping[Any, Any], found: dict[str, int], depth: int) -> Any:
        out: dict[Any, Any] = {}
        changed = False
        for key, item in value.items():
            plain, names_a_secret = self._key_facts(key)
            new_key = key if plain else self.scrub_text(key, found)
            if isinstance(item, str):  # the usual case, without the recursion
                if self._secret and names_a_secret and item and item != MASKS["secret"]:
                    new_item: Any = MASKS["secret"]
                    _count(found, "secret")
                else:
                    new_item = self.scrub_text(item, found)
            elif type(item) is int:  # the next most usual: no recursion either
                new_item = self._number(item, found)
            elif type(item) in _SCALARS and depth < _MAX_DEPTH:  # as scrub() would answer
                new_item = item
            else:
                new_item = self.scrub(item, found, _depth=depth + 1)
            changed = changed or new_key is not key or new_item is not item
            out[new_key] = new_item
        return out if changed else value

    def _number(self, value: int, found: dict[str, int]) -> Any:
        """An integer, or the card mask when it is a card number and cards are masked."""
        if "card" in self.kinds and 10**12 <= value < 10**19 and card_valid(str(value)):
            _count(found, "card")
            return MASKS["card"]
        return value


_MAX_DEPTH: Final = 64
_MAPPINGS: Final = (dict, Mapping)
_SEQUENCES: Final = (list, tuple)
_SCALARS: Final = frozenset({float, bool, type(None)})
"""JSON values with nothing in them to mask (told by their exact type)."""


def _key_facts(key: object) -> tuple[bool, bool]:
    """Whether a mapping key is a plain name (nothing in it to mask), and whether it
    names a secret (the value under it is masked whole)."""
    if not isinstance(key, str):
        return True, False
    return is_plain_name(key), is_secret_key(key)


def _count(found: dict[str, int], kind: str) -> None:
    found[kind] = found.get(kind, 0) + 1


def is_plain_name(key: str) -> bool:
    """A short identifier such as a parameter name: nothing in it to check or mask."""
    return len(key) < 20 and key.isidentifier()


def _apply(finder: Finder, kind: str, text: str, found: dict[str, int]) -> str:
    text, count = finder(text)
    if count:
        found[kind] = found.get(kind, 0) + count
    return text
