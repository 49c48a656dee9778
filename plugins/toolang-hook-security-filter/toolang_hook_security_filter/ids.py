"""National identity numbers, each validated with ``python-stdnum`` (check digits,
dates, reserved ranges), and a few provider keys through ``detect-secrets`` plugins.

A number that fails its checksum is not masked: ``000-12-3456`` is no SSN, a random
nine-digit order number is no BSN. Numbers whose shape alone says little (nine, eleven
or twelve bare digits) are only masked after a word that names them ("BSN", "PESEL",
"Aadhaar", "SIN" …) — the way reviewers read them too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

import attrs

from toolang_hook_security_filter import kept_regex
from toolang_hook_security_filter.finders import MASKS, PROVIDER_KEY_MIN, _masked

MASK: Final = "[national id redacted]"
_CONTEXT_CHARS: Final = 32


def _ssn(value: str) -> bool:
    from stdnum.us import ssn

    return bool(ssn.is_valid(value))


_NINO_PREFIX_BAD: Final = frozenset({"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"})


def _nino(value: str) -> bool:
    """HMRC's rules: the prefix letters and the suffix A-D (no check digit exists)."""
    compact = value.replace(" ", "").upper()
    first, second = compact[0], compact[1]
    return (
        first not in "DFIQUV"
        and second not in "DFIOQUV"
        and compact[:2] not in _NINO_PREFIX_BAD
        and compact[-1] in "ABCD"
    )


def _stdnum(module: str) -> Callable[[str], bool]:
    def valid(value: str) -> bool:
        import importlib

        checker = importlib.import_module(f"stdnum.{module}")
        return bool(checker.is_valid(value))

    return valid


@attrs.frozen
class IdShape:
    """One kind of number: its shape, its validator and the words that must precede it
    (none: the shape is telling enough)."""

    name: str
    pattern: str
    valid: Callable[[str], bool]
    context: str = ""


SHAPES: Final = (
    IdShape("us-ssn", r"\d{3}-\d{2}-\d{4}", _ssn),
    IdShape("gb-nino", r"[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]", _nino),
    IdShape("es-dni", r"\d{8}-?[A-Z]", _stdnum("es.dni")),
    IdShape("es-nie", r"[XYZ]-?\d{7}-?[A-Z]", _stdnum("es.nie")),
    IdShape("br-cpf", r"\d{3}\.\d{3}\.\d{3}-\d{2}", _stdnum("br.cpf")),
    IdShape(
        "it-codicefiscale",
        r"[A-Z]{6}\d{2}[A-EHLMPRST]\d{2}[A-Z]\d{3}[A-Z]",
        _stdnum("it.codicefiscale"),
    ),
    IdShape(
        "se-personnummer", r"(?:\d{2})?\d{6}[-+]\d{4}", _stdnum("se.personnummer"), r"person|pnr"
    ),
    IdShape("nl-bsn", r"\d{4}\.?\d{2}\.?\d{3}|\d{9}", _stdnum("nl.bsn"), r"bsn|burgerservice|sofi"),
    IdShape("pl-pesel", r"\d{11}", _stdnum("pl.pesel"), r"pesel"),
    IdShape("br-cpf-bare", r"\d{11}", _stdnum("br.cpf"), r"cpf"),
    IdShape("in-aadhaar", r"[2-9]\d{3} ?\d{4} ?\d{4}", _stdnum("in_.aadhaar"), r"aadhaa?r|\buid"),
    IdShape("ca-sin", r"\d{3}[ -]?\d{3}[ -]?\d{3}", _stdnum("ca.sin"), r"\bsin\b|social insurance"),
    IdShape(
        "fr-nir",
        r"[12] ?\d{2} ?\d{2} ?\d{2} ?\d{3} ?\d{3} ?\d{2}",
        _stdnum("fr.nir"),
        r"nir|s[ée]cu|insee",
    ),
    IdShape("de-idnr", r"\d{2} ?\d{3} ?\d{3} ?\d{3}", _stdnum("de.idnr"), r"steuer|idnr|tax id"),
)


GATE: Final = r"\d(?:\D?\d){5}"
"""What every one of :data:`SHAPES` holds: six digits, at most one other character
between two of them. A text without it holds no national id — most texts, and all
those with only short numbers ("add 12 25"), which the whole pattern's fourteen
alternatives would otherwise try at every digit."""


class IdFinder:
    """Masks national identity numbers in text."""

    def __init__(self) -> None:
        alternatives = "|".join(f"(?P<s{i}>{shape.pattern})" for i, shape in enumerate(SHAPES))
        # (from kept engine code: compiling it takes 1-2 ms of each process)
        self._regex = kept_regex.compile(rf"(?<![\w.+-])(?:{alternatives})(?![\w-]|\.\d)")
        self._context = [re.compile(s.context, re.I) if s.context else None for s in SHAPES]
        self._gate = re.compile(GATE)

    def __call__(self, text: str) -> tuple[str, int]:
        if not self._gate.search(text):
            return text, 0
        spans = []
        for match in self._regex.finditer(text):
            for index, shape in enumerate(SHAPES):
                if match.group(f"s{index}") is None:
                    continue
                if self._matches(index, shape, match.group(), text, match.start()):
                    spans.append(match.span())
                    break
                # The same digits may fit a later shape (eleven digits: PESEL or CPF).
                later = self._later(index, match.group(), text, match.start())
                if later:
                    spans.append(match.span())
                break
        if not spans:
            return text, 0
        return _masked(text, spans, MASK)

    def _matches(self, index: int, shape: IdShape, value: str, text: str, start: int) -> bool:
        context = self._context[index]
        if context is not None and not context.search(text[max(0, start - _CONTEXT_CHARS) : start]):
            return False
        try:
            return shape.valid(value)
        except Exception:  # a validator that chokes on odd input has not found an id
            return False

    def _later(self, index: int, value: str, text: str, start: int) -> bool:
        for later in range(index + 1, len(SHAPES)):
            shape = SHAPES[later]
            if re.fullmatch(shape.pattern, value) and self._matches(
                later, shape, value, text, start
            ):
                return True
        return False


# detect-secrets' plugins for provider keys the shapes in finders.KEY_SHAPES do not list.
_DETECT_SECRETS: Final = (
    "azure_storage_key.AzureStorageKeyDetector",
    "twilio.TwilioKeyDetector",
    "square_oauth.SquareOAuthDetector",
    "telegram_token.TelegramBotTokenDetector",
    "discord.DiscordBotTokenDetector",
    "mailchimp.MailchimpDetector",
    "artifactory.ArtifactoryDetector",
)
# Shapes detect-secrets does not know (prefix: the rest), kept to well-documented ones.
_MORE_SHAPES: Final = (
    r"dop_v1_[a-f0-9]{64}",  # DigitalOcean
    r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",  # Shopify
    r"key-[a-f0-9]{32}",  # Mailgun
    r"sq0atp-[0-9A-Za-z_-]{22}",  # Square access tokens
    r"https://discord(?:app)?\.com/api/webhooks/\d+/[\w-]{60,}",  # Discord webhooks
    # HashiCorp Vault service, batch and recovery tokens (Vault 1.10+: hvs./hvb./hvr.)
    r"(?<![\w.-])hv[sbr]\.[A-Za-z0-9_-]{24,}(?![\w-])",
    # Azure connection strings' keys of any length (detect-secrets' plugin asks for the
    # 88 characters of a storage account key; Service Bus and Event Hubs keys are 44).
    r"(?<![\w])(?:AccountKey|SharedAccessKey)=[A-Za-z0-9+/]{20,}={0,2}",
)


class ProviderKeyFinder:
    """Provider keys from detect-secrets' regex plugins, and a few more shapes.

    The patterns are compiled on the first text long enough to hold a key, not when the
    finder is made (every runtime makes one); see :mod:`.provider_patterns` for how they
    are read from detect-secrets.
    """

    def __init__(self) -> None:
        self._gate = re.compile(rf"[A-Za-z0-9_+/=-]{{{PROVIDER_KEY_MIN}}}")
        self._compiled: re.Pattern[str] | None = None

    @property
    def _regex(self) -> re.Pattern[str]:
        if self._compiled is None:
            from toolang_hook_security_filter.provider_patterns import detect_secrets_patterns

            patterns = [*_MORE_SHAPES, *detect_secrets_patterns(_DETECT_SECRETS)]
            # (from kept engine code: compiling it takes 1-2 ms of each process)
            self._compiled = kept_regex.compile("|".join(f"(?:{p})" for p in patterns))
        return self._compiled

    def __call__(self, text: str) -> tuple[str, int]:
        if not self._gate.search(text):
            return text, 0
        spans = [m.span() for m in self._regex.finditer(text) if m.end() > m.start()]
        return _masked(text, spans, MASKS["secret"])
