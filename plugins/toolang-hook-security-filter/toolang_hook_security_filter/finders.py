"""Where personal data sits in a string: one finder per kind, each masking what it finds.

Every pattern starts with a literal or a character class and checks the boundary
*behind* its first character, so ``re`` jumps from candidate to candidate instead of
trying every position; emails are found from each ``@`` outwards. A finder returns the
new string and how many values it masked. Patterns are compiled on first use by a
:class:`Finders` (one per runtime), never at import.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Final

MASKS: Final[Mapping[str, str]] = {
    "email": "[email redacted]",
    "phone": "[phone redacted]",
    "card": "[card redacted]",
    "iban": "[iban redacted]",
    "secret": "[secret redacted]",
    "national_id": "[national id redacted]",
}

# ISO 13616 registry: the length of each country's IBAN.
IBAN_LENGTHS: Final[Mapping[str, int]] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
    "BH": 22, "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24,
    "DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
    "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27,
    "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
    "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20,
    "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24,
    "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
    "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
    "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
    "YE": 30,
}  # fmt: skip

_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[47]|3[068]|6(?:011|5|4[4-9]|22)|35")
# Not top-level domains: ``icon@2x.png`` is a file name.
_FILE_EXTENSIONS = frozenset(
    (
        *("png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "js", "mjs", "cjs", "ts"),
        *("tsx", "jsx", "css", "scss", "json", "yaml", "yml", "toml", "lock", "txt"),
    )
)


# Key shapes by their literal prefix: a string is only searched for the shapes whose
# prefix it holds, each with a pattern that starts with that literal (the fast case).
KEY_SHAPES: Final[Mapping[str, str]] = {
    "sk-": r"(?:proj-|ant-(?:api\d\d-)?|svcacct-)?[A-Za-z0-9_-]{20,}",  # OpenAI, Anthropic
    "sk_": r"(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe secret keys
    "rk_": r"(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe restricted keys
    **{f"gh{c}_": r"[A-Za-z0-9]{30,}" for c in "pousr"},  # GitHub
    "github_pat_": r"[A-Za-z0-9_]{30,}",
    "glpat-": r"[A-Za-z0-9_-]{20,}",  # GitLab
    "xox": r"[abposr]-[A-Za-z0-9-]{10,}",  # Slack
    "AKIA": r"[0-9A-Z]{16}",  # AWS access key ids
    "ASIA": r"[0-9A-Z]{16}",
    "AIza": r"[0-9A-Za-z_-]{35}",  # Google
    "eyJ": r"[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # JWTs
    "npm_": r"[A-Za-z0-9]{36}",
    "pypi-": r"AgE[A-Za-z0-9_-]{50,}",
    "hf_": r"[A-Za-z0-9]{30,}",  # Hugging Face
    "SG.": r"[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",  # SendGrid
    "-----BEGIN": (
        r" (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"
    ),
    "hooks.slack.com": r"/services/[A-Za-z0-9/]{20,}",
}


def _shape_pattern(prefix: str, rest: str) -> str:
    literal = re.escape(prefix)
    if prefix[0].isalnum():  # not glued to a word before it
        literal += f"(?<![\\w-]{literal})"
    return literal + rest + r"(?![\w-])"


# On the lowercased string: the credential after "Bearer"/"Basic", and the value assigned
# to a key that ends in a secret's name (DB_PASSWORD=…, "api_key": "…").
_LABELLED = (
    r"bearer(?<!\wbearer)\s+(?P<bearer>[a-z0-9._~+/=-]{16,})"
    r"|basic(?<!\wbasic)\s+(?P<basic>[a-z0-9+/]{12,}={0,2})(?![\w+/=])"
    r"|(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|credentials?)[\"']?\s*[=:]\s*(?P<quote>[\"']?)"
    r"(?P<assigned>[^\s\"'`,;(){}\[\]<>]{6,})(?=(?P=quote)(?:[\s,;&|}]|$))"
)
_URL_PASSWORD = r"://[^:/@\s]*:(?P<password>[^@/\s]+)@"
_EMAIL_LOCAL = r"[A-Za-z0-9._%+-]{1,64}\Z"
_EMAIL_DOMAIN = (
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?P<tld>[A-Za-z]{2,24})\b"
    r"(?!:[\w~/])(?![.-]\w|@)"
)
_IBAN = r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z]\d{2}(?: ?[A-Z0-9]){11,32}"
_CARD = (
    r"\d(?<![\w.-]\d)(?:\d{12,18}"
    r"|\d{3}([ -])\d{4}\1\d{4}\1\d{1,4}(?:\1\d{3})?"  # 4-4-4-4 (and 4-4-4-1…4, 4-4-4-4-3)
    r"|\d{3}([ -])\d{6}\2\d{4,5})"  # 4-6-5 (Amex), 4-6-4 (Diners)
    r"(?![\w.-]*\w)"
)
# One pattern, first character a class (the fast case), then a branch on it.
_PHONE = (
    r"[+(\d](?<![\w+/.-][+(\d])(?<!:[(\d])(?:"
    r"(?<=\+)\d{1,3}(?:[\s.-]?\(?\d{1,5}\)?){2,5}"  # +44 20 7946 0958, tel:+15551234567
    r"|(?<=\()\d{3}\)\s?\d{3}[\s.-]\d{4}"  # (555) 123-4567
    r"|(?<=\d)\d{2}[.-]\d{3}[.-]\d{4}"  # 555-123-4567, 555.123.4567
    r"|(?<=0)(?:\d{1,4}[\s-]\d{3,4}[\s-]\d{3,4}"  # 020 7946 0958, 030-1234-5678
    r"|\d(?:[\s.]\d{2}){4}"  # 01 42 68 53 00
    r"|\d{3,4}\s\d{6})"  # 07911 123456
    r")(?![\w/.:-]*\w)"
)
# An AWS secret access key is 40 characters of base64 with no shape of its own: it is
# told by the access key id beside it (at most AWS_PAIR_GAP characters apart, either
# order), the way it is printed in consoles, CSV downloads and credential files.
AWS_PAIR_GAP: Final = 40
_AWS_KEY_ID = r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"
_AWS_SECRET = r"(?<![A-Za-z0-9/+=])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
_AWS_PAIR = (
    rf"{_AWS_KEY_ID}[\s\S]{{0,{AWS_PAIR_GAP}}}?{_AWS_SECRET}"
    rf"|{_AWS_SECRET.replace('secret', 'before')}[\s\S]{{0,{AWS_PAIR_GAP}}}?{_AWS_KEY_ID}"
)
PROVIDER_KEY_MIN: Final = 20
"""Key characters in a row every provider key holds (ids.ProviderKeyFinder): a shorter
text holds none."""
_SEVEN_DIGITS = r"(?:\D*+\d){7}"  # no phone, card or IBAN has fewer
_SIX_DIGITS = r"(?:\D*+\d){6}"  # nor a national id (see ids.GATE)
"""At least that many digits in the text, anywhere: asked with ``match`` (one pass from
the start, nothing given back), not ``search``."""


def luhn_valid(digits: str) -> bool:
    """The Luhn (mod 10) check used by payment card numbers."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if index % 2:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def card_valid(digits: str) -> bool:
    """13-19 digits with a card issuer's prefix and a valid Luhn checksum."""
    return (
        13 <= len(digits) <= 19
        and digits.isdigit()
        and _CARD_PREFIX.match(digits) is not None
        and luhn_valid(digits)
    )


def iban_valid(text: str) -> bool:
    """A known country, its length and the ISO 13616 mod-97 check (spaces allowed)."""
    compact = text.replace(" ", "").upper()
    if IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact.isalnum():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


Finder = Callable[[str], tuple[str, int]]


class Finders:
    """The compiled patterns, and one finder per kind."""

    def __init__(self) -> None:
        # Some thirty key shapes: each is compiled when a text first holds its prefix.
        self._shapes: dict[str, re.Pattern[str]] = {}
        self.seven_digits = re.compile(_SEVEN_DIGITS)
        self.six_digits = re.compile(_SIX_DIGITS)

    # The kinds' patterns are compiled by the first text that gets as far as each: most
    # texts are passed over by a cheap look first (no "@", fewer than six digits ...).
    @functools.cached_property
    def _labelled(self) -> re.Pattern[str]:
        return re.compile(_LABELLED)

    @functools.cached_property
    def _labelled_any_case(self) -> re.Pattern[str]:
        return re.compile(_LABELLED, re.IGNORECASE)

    @functools.cached_property
    def _url_password(self) -> re.Pattern[str]:
        return re.compile(_URL_PASSWORD)

    @functools.cached_property
    def _email_local(self) -> re.Pattern[str]:
        return re.compile(_EMAIL_LOCAL)

    @functools.cached_property
    def _email_domain(self) -> re.Pattern[str]:
        return re.compile(_EMAIL_DOMAIN)

    @functools.cached_property
    def _iban(self) -> re.Pattern[str]:
        return re.compile(_IBAN)

    @functools.cached_property
    def _card(self) -> re.Pattern[str]:
        return re.compile(_CARD)

    @functools.cached_property
    def _phone(self) -> re.Pattern[str]:
        return re.compile(_PHONE)

    @functools.cached_property
    def _aws_pair(self) -> re.Pattern[str]:
        return re.compile(_AWS_PAIR)

    def key_shapes(self, text: str, prefixes: Iterable[str]) -> tuple[str, int]:
        """API keys and tokens of the shapes whose ``prefixes`` the text holds."""
        count = 0
        for prefix in prefixes:
            shape = self._shapes.get(prefix)
            if shape is None:  # two threads may both compile it: either is right
                shape = re.compile(_shape_pattern(prefix, KEY_SHAPES[prefix]))
                self._shapes[prefix] = shape
            text, found = shape.subn(MASKS["secret"], text)
            count += found
        return text, count

    def aws_secret_keys(self, text: str) -> tuple[str, int]:
        """AWS secret access keys beside their access key id (the id itself is a key
        shape). A candidate needs upper- and lower-case letters and a digit, ``/`` or
        ``+``: a git SHA beside an id is no secret."""
        if "AKIA" not in text and "ASIA" not in text:
            return text, 0
        spans = []
        for match in self._aws_pair.finditer(text):
            group = "secret" if match["secret"] is not None else "before"
            if _mixed(match[group]):
                spans.append(match.span(group))
        return _masked(text, spans, MASKS["secret"])

    def labelled(self, text: str) -> tuple[str, int]:
        """Credentials after "Bearer"/"Basic", values of ``password=``-like assignments."""
        # Lowercasing keeps positions for ASCII; other text is searched case-blind.
        lowered = text.lower() if text.isascii() else None
        pattern = self._labelled if lowered is not None else self._labelled_any_case
        spans = []
        for match in pattern.finditer(lowered if lowered is not None else text):
            group = next(g for g in ("bearer", "basic", "assigned") if match[g] is not None)
            start, end = match.span(group)
            if _looks_like_a_credential(group, text[start:end]):
                spans.append((start, end))
        return _masked(text, spans, MASKS["secret"])

    def url_passwords(self, text: str) -> tuple[str, int]:
        """The password in ``scheme://user:password@host``."""
        spans = [m.span("password") for m in self._url_password.finditer(text)]
        return _masked(text, spans, MASKS["secret"])

    def emails(self, text: str) -> tuple[str, int]:
        """Addresses, found from each ``@``: not SSH remotes, URLs' users or ``x@2x.png``."""
        spans = []
        at = text.find("@")
        while at != -1:
            local = self._email_local.search(text, max(0, at - 64), at)
            domain = self._email_domain.match(text, at + 1)
            if local is not None and domain is not None:
                start = local.start()
                if (
                    text[start].isalnum()
                    and not text.startswith("://", start - 3)
                    and domain["tld"].lower() not in _FILE_EXTENSIONS
                ):
                    spans.append((start, domain.end()))
            at = text.find("@", at + 1)
        return _masked(text, spans, MASKS["email"])

    def ibans(self, text: str) -> tuple[str, int]:
        """IBANs, each cut to its country's length (the pattern may run on into words)."""
        spans = []
        for match in self._iban.finditer(text):
            length = IBAN_LENGTHS.get(match.group()[:2])
            end = None if length is None else _end_after(text, match.start(), length)
            if end is None or end > match.end() or (end < len(text) and text[end].isalnum()):
                continue
            if iban_valid(text[match.start() : end]):
                spans.append((match.start(), end))
        return _masked(text, spans, MASKS["iban"])

    def cards(self, text: str) -> tuple[str, int]:
        """Card numbers with an issuer prefix and a valid Luhn checksum."""
        spans = [
            m.span()
            for m in self._card.finditer(text)
            if card_valid(m.group().replace(" ", "").replace("-", ""))
        ]
        return _masked(text, spans, MASKS["card"])

    def phones(self, text: str) -> tuple[str, int]:
        """Phone numbers of 7 to 15 digits in the shapes the pii module lists."""
        spans = [
            m.span()
            for m in self._phone.finditer(text)
            if 7 <= sum(ch.isdigit() for ch in m.group()) <= 15 and phone_valid(m.group())
        ]
        return _masked(text, spans, MASKS["phone"])


PHONE_REGIONS: Final = ("US", "GB", "DE", "FR", "NL", "IT", "ES", "IN", "AU", "BR", "JP", "CA")
"""Where a number without a country code is tried (``phonenumbers``), in this order."""


def phone_valid(candidate: str) -> bool:
    """Whether ``phonenumbers`` takes ``candidate`` for a phone number: possible with
    its country code, or valid in one of :data:`PHONE_REGIONS` without one."""
    import phonenumbers

    try:
        if candidate.lstrip("(").startswith("+"):
            return bool(phonenumbers.is_possible_number(phonenumbers.parse(candidate, None)))
        for region in PHONE_REGIONS:
            if phonenumbers.is_valid_number(phonenumbers.parse(candidate, region)):
                return True
    except phonenumbers.NumberParseException:
        return False
    return False


_PLACEHOLDER: Final = re.compile(
    r"changeme|example|placeholder|redacted|your[_-]|xxxx|<|\$\{", re.I
)


def _mixed(value: str) -> bool:
    return (
        any(ch.isupper() for ch in value)
        and any(ch.islower() for ch in value)
        and any(ch.isdigit() or ch in "/+" for ch in value)
    )


def _looks_like_a_credential(group: str, value: str) -> bool:
    # Prose and code put words after these labels too ("Basic configuration",
    # "password=get_password"): ask for what real credentials have.
    if group == "bearer":
        return not (value.isalpha() and value.islower())
    if group == "basic":
        return any(ch.isdigit() or ch in "+/=" for ch in value)
    if _PLACEHOLDER.search(value):
        return False
    has_letter = any(ch.isalpha() for ch in value)
    return has_letter and (any(ch.isdigit() for ch in value) or len(value) >= 16)


def _masked(
    text: str, spans: list[tuple[int, int]], mask: str, already: int = 0
) -> tuple[str, int]:
    """``text`` with each span replaced by ``mask`` (overlaps merged); the total count."""
    if not spans:
        return text, already
    pieces: list[str] = []
    last = 0
    count = 0
    for start, end in sorted(spans):
        if start < last:  # overlaps one already masked
            continue
        pieces += [text[last:start], mask]
        last = end
        count += 1
    return "".join([*pieces, text[last:]]), already + count


def _end_after(text: str, start: int, length: int) -> int | None:
    """Where ``length`` non-space characters from ``start`` end (single spaces skipped)."""
    seen = 0
    index = start
    while index < len(text) and seen < length:
        if text[index] != " ":
            seen += 1
        index += 1
    return index if seen == length else None
