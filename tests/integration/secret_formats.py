"""The secret formats the redaction tests carry through a conversation, and how to look
for them raw: one list for every door (at rest: the home's files, the log, the CLI; on
the wire: SSE, A2A, HTTP bodies).

Each value is shaped as its provider issues it (none is a live credential). Three were
masked nowhere before issue #30: a bare AWS secret access key beside its access key id,
an Azure storage connection string's ``AccountKey`` and a HashiCorp Vault ``hvs.`` token.
"""

from __future__ import annotations

from typing import Final

SECRETS: Final = {
    "AWS access key": "AKIAQ7ZRXW4N2LMK8PTB",
    "AWS secret access key": "IZsNbNP0nqdzyPifDaH7/pbek610MH6z1PwI4ezb",
    "GitHub token": "ghp_R8mT2vX9qL4wZ7nB3kD6fH1jP5sC0yA2eG4u",
    "GitLab token": "glpat-pZKRrWBKgRrOJ5hNF7ti",
    "Slack token": "xoxb-2718281828-3141592653-QzVbNmLkJhGf",
    "Slack webhook": "TTTQ6FIPU/BHB06TL7L4V/GC3Q8vHveb7P8gE4Fq7EqLq5",
    "Stripe key": "sk_live_4eC39HqLyjWDarjtT1zdp7dcX9",
    "OpenAI key": "sk-proj-OPgAB0FezzXSFrA9w3VyoYWtu9h6gHyXRB2V",
    "Anthropic key": "sk-ant-api03-S4RkRl0lGsAQo7nEx7B5V0NtG9yQO6ytZZP1SExt-HiUk9sH7ubSm",
    "npm token": "npm_hXvJcLJ6q2zUY0OIcTCQaj0MFN2xqC0Hii36",
    "PyPI token": "pypi-AgEIcHlwaS5vcmcyHeV6v1bmAKEajB9eypWsWtX4Na5uvaEWCPgwF8WEKUlhpvEygmmEVg",
    "Hugging Face token": "hf_SHwb5RRKkW2X3UxHItmMwjKomSNM1ijChM",
    "SendGrid key": "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",
    "JWT": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJxdWlsbGZlYXRoZXIifQ.Kx8Jd2Lq7Vn4Mz9Pw3Rt6Ys1Hb5Gc0Fa",
    "Google API key": "AIzaa25aJFeGB5lc8Vznh5dZwSk6FvHMQvBbyuE",
    "Azure storage key": (
        "uUYXEOCAemUelbMNaeguOlsbMCS9wSI8ymcI2Ha3+ZO4Oh7NZBsr4hzlrehQyBQiHKx4w7AecN1NlEaxkDPvXz=="
    ),
    "Vault token": (
        "hvs.CAESIxwVDQGcclscO_FqttCjoPeCgeQ1mCGvJnQxcAS-xgDCtBVzQjF9ALZ-Pdp7eF_8_uNm91wrwlaL2YFBhsep"
        "8u5ncOG"
    ),
    "bearer token": "xkSB7f8kBqytsCvxiQftYApiR9d1PhBY",
    "password assignment": "uP33y6vZ7YlCRz0J",
    "password in a URL": "Hunter2Quillfeather",
    "private key": "MIIEpAIBAAKCAQEAquillfeatherPEMbody0123456789abcdef",
    "card number": "4539 1488 0343 6467",
    "IBAN": "GB82 WEST 1234 5698 7654 32",
    "email": "ada.quillfeather@example.org",
    "phone": "+44 20 7946 0958",
}
"""Name → the raw value (24 kinds; the AWS key id and its secret make one pair)."""

SECRET_TEXT: Final = (
    f"my aws key {SECRETS['AWS access key']} {SECRETS['AWS secret access key']}, "
    f"github {SECRETS['GitHub token']}, gitlab {SECRETS['GitLab token']}, "
    f"slack {SECRETS['Slack token']}, "
    f"hook https://hooks.slack.com/services/{SECRETS['Slack webhook']}, "
    f"stripe {SECRETS['Stripe key']}, openai {SECRETS['OpenAI key']}, "
    f"anthropic {SECRETS['Anthropic key']}, npm {SECRETS['npm token']}, "
    f"pypi {SECRETS['PyPI token']}, hf {SECRETS['Hugging Face token']}, "
    f"sendgrid {SECRETS['SendGrid key']}, session {SECRETS['JWT']}, "
    f"maps {SECRETS['Google API key']}, "
    "azure DefaultEndpointsProtocol=https;AccountName=quillstore;"
    f"AccountKey={SECRETS['Azure storage key']};EndpointSuffix=core.windows.net, "
    f"vault {SECRETS['Vault token']}, "
    f"header Authorization: Bearer {SECRETS['bearer token']}, "
    f"env DB_PASSWORD={SECRETS['password assignment']}, "
    f"db postgres://admin:{SECRETS['password in a URL']}@db.example.com/app, "
    f"card {SECRETS['card number']}, iban {SECRETS['IBAN']}, "
    f"mail {SECRETS['email']}, phone {SECRETS['phone']}\n"
    f"-----BEGIN RSA PRIVATE KEY-----\n{SECRETS['private key']}\n"
    "-----END RSA PRIVATE KEY-----\n"
)
"""Every secret in one text, each in the context it is usually found in."""


def needles() -> dict[str, str]:
    """Each raw value as it could appear (lower-cased): numbers also without their
    spaces, and a value JSON escapes (``/``) also escaped."""
    found = {name: value.lower() for name, value in SECRETS.items()}
    for name in ("card number", "IBAN", "phone"):
        found[f"{name} (compact)"] = SECRETS[name].replace(" ", "").lower()
    found["phone (national part)"] = "7946 0958"
    for name, value in SECRETS.items():
        if "/" in value:
            found[f"{name} (JSON-escaped)"] = value.replace("/", "\\/").lower()
    return found


def leaks(text: str) -> list[str]:
    """The names of the secrets ``text`` holds raw."""
    lowered = text.lower()
    return [name for name, value in needles().items() if value in lowered]
