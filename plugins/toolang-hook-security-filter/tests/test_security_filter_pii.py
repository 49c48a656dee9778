"""Personal data and secrets: masked in parameters going in and results coming out."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, strategies as st

import toolang_hook_security_filter as plugin
from toolang_core import Modify, Tool, ToolCall, ToolCallContext, ToolResult, hookimpl
from toolang_hook_security_filter.finders import KEY_SHAPES, iban_valid, luhn_valid
from toolang_hook_security_filter.ids import GATE, SHAPES, IdFinder
from toolang_hook_security_filter.pii import Scrubber

FOUND = {
    "email": ["mail jane.doe@example.com today", "first.last+tag@sub.example.co.uk"],
    "phone": ["+44 20 7946 0958", "(415) 555-2671", "415-555-2671", "01 42 68 53 00"],
    "card": ["4111 1111 1111 1111", "5500-0000-0000-0004", "3782 822463 10005"],
    "iban": ["GB82 WEST 1234 5698 7654 32", "DE89370400440532013000"],
    "secret": [
        "OPENAI_API_KEY=sk-proj-abc123DEF456ghi789JKL012mno345",
        "token ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "postgres://app:s3cr3tPass@db.internal:5432/app",
        "redis://:verysecretpw@cache.internal:6379/0",  # a password with no user name
        "DB_PASSWORD=hunter22!",
        "Authorization: Bearer abcDEF123ghiJKL456mno",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq98zgZ\n-----END RSA PRIVATE KEY-----",
    ],
}
LOOK_ALIKES = [
    "order ORD-2024-000123 shipped",
    "2024-03-15T10:22:33Z",
    "ts_ms=1710498153123",
    "Python 3.11.7",
    "ISBN 978-3-16-148410-0",
    "9780306406157",
    "id 4111111111111112",  # 16 digits, Luhn fails
    "550e8400-e29b-41d4-a716-446655440000",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "192.168.1.100",
    "git clone git@github.com:org/repo.git",
    "ssh://git@gitlab.com/group/proj.git",
    '<img src="icon@2x.png">',
    "npm install lodash@4.17.21",
    "max_tokens=4096",
    "api_key: YOUR_API_KEY",
    "password: ${DB_PASSWORD}",
    "Basic authentication is enabled",
    "GB82 WEST 1234 5698 7654 33",  # mod 97 fails
    "serial 555-123-45678",
    "arn:aws:iam::123456789012:role/Admin",
    "def login(password: str) -> bool:",
]


@pytest.mark.parametrize(
    ("kind", "text"), [(kind, text) for kind, texts in FOUND.items() for text in texts]
)
def test_each_kind_is_masked_in_parameters(default_filter, kind, text):
    verdict = default_filter.call({"body": text}, tool="send_note")
    assert isinstance(verdict, Modify)
    assert f"[{kind} redacted]" in verdict.params["body"]
    assert verdict.reason == f"masked personal data in the parameters: 1 {kind}"


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_are_left_alone(default_filter, text):
    assert default_filter.call({"body": text}, tool="send_note") is None
    assert default_filter.result(text) is None


def test_the_reason_counts_kinds_and_never_quotes_values(default_filter):
    params = {"to": ["ann@example.com", "bob@example.com"], "card": "4111 1111 1111 1111"}
    verdict = default_filter.call(params, tool="send_note")
    assert isinstance(verdict, Modify)
    assert verdict.reason == "masked personal data in the parameters: 1 card, 2 email"
    assert "example.com" not in verdict.reason
    assert verdict.params == {
        "to": ["[email redacted]", "[email redacted]"],
        "card": "[card redacted]",
    }


def test_a_value_under_a_secret_key_is_masked_whole(default_filter):
    verdict = default_filter.call({"db": {"host": "db.internal", "password": "correct horse"}})
    assert isinstance(verdict, Modify)
    assert verdict.params == {"db": {"host": "db.internal", "password": "[secret redacted]"}}


def test_results_are_masked_in_nested_output_and_in_the_error(default_filter):
    output = {"users": [{"name": "Ann", "email": "ann@example.com", "card": 4111111111111111}]}
    masked = default_filter.result(output, error="mail to bob@example.com bounced")
    assert isinstance(masked, ToolResult)
    assert masked.output == {
        "users": [{"name": "Ann", "email": "[email redacted]", "card": "[card redacted]"}]
    }
    assert masked.error == "mail to [email redacted] bounced"
    assert masked.duration_ms == 1.5


def test_a_result_without_personal_data_is_not_replaced(default_filter):
    assert default_filter.result({"rows": [1, 2, 3], "note": "all good"}) is None


def test_masking_twice_changes_nothing():
    scrubber = Scrubber()
    found: dict[str, int] = {}
    once = scrubber.scrub_text("jane@example.com +44 20 7946 0958 DB_PASSWORD=hunter22!", found)
    again: dict[str, int] = {}
    assert scrubber.scrub_text(once, again) == once
    assert again == {}


def test_only_the_iban_is_masked_not_the_words_after_it():
    found: dict[str, int] = {}
    text = Scrubber().scrub_text("pay GB82 WEST 1234 5698 7654 32 TODAY", found)
    assert text == "pay [iban redacted] TODAY"


@pytest.mark.parametrize(
    ("digits", "valid"), [("4111111111111111", True), ("4111111111111112", False)]
)
def test_luhn(digits, valid):
    assert luhn_valid(digits) is valid


@pytest.mark.parametrize(
    ("iban", "valid"),
    [
        ("GB82 WEST 1234 5698 7654 32", True),
        ("GB82 WEST 1234 5698 7654 33", False),
        ("GB82 WEST 1234 5698 7654 3", False),  # one character short for GB
        ("ZZ82 WEST 1234 5698 7654 32", False),  # no such country
    ],
)
def test_iban_checksum_country_and_length(iban, valid):
    assert iban_valid(iban) is valid


def test_provider_key_patterns_are_those_of_the_installed_detect_secrets():
    """Read from detect-secrets' source (no import of it, nor of requests), the
    patterns are exactly what its plugin classes hold."""
    from toolang_hook_security_filter.ids import _DETECT_SECRETS
    from toolang_hook_security_filter.provider_patterns import (
        _imported,
        _read_from_source,
    )

    read = _read_from_source(_DETECT_SECRETS)
    assert read is not None
    assert read == _imported(_DETECT_SECRETS)


def test_masking_a_provider_key_imports_neither_detect_secrets_nor_requests():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from toolang_hook_security_filter.pii import Scrubber\n"
        "key = 'AC' + '0123456789abcdef' * 2\n"
        "masked = Scrubber().scrub_text('twilio sid ' + key + ' here', {})\n"
        "print(key not in masked and '[secret redacted]' in masked)\n"
        "print(any(m.split('.')[0] in ('detect_secrets', 'requests') for m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False"]


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.name for shape in SHAPES])
@given(data=st.data())
def test_every_national_id_shape_passes_the_gate_that_spares_other_texts(shape, data):
    """The finder skips a text without :data:`GATE` in it: every value of every shape
    must hold it, or a national id could go unmasked."""
    value = data.draw(st.from_regex(shape.pattern, fullmatch=True))
    assert re.search(GATE, value), value


def test_a_text_with_only_short_numbers_is_left_as_it_is():
    finder = IdFinder()
    assert finder("add 12 25") == ("add 12 25", 0)
    assert finder("SSN 536-45-6789 on file") == ("SSN [national id redacted] on file", 1)


@given(st.text(alphabet=st.sampled_from("0123456789\u0663\u06f7 -.+()/ab\n"), max_size=40))
def test_the_digit_gates_pass_every_text_the_finders_behind_them_could_match(text):
    """Scrubber.scrub_text asks the id, phone, card and IBAN finders only of a text with
    six digits (seven for the last three): what each finder's own gate needs."""
    from toolang_hook_security_filter.finders import Finders

    finders = Finders()
    six, seven = finders.six_digits.match(text), finders.seven_digits.match(text)
    assert bool(six) == (sum(c.isdigit() for c in text) >= 6)
    assert bool(seven) == bool(re.search(r"\d(?:\D*\d){6}", text))  # the former gate
    if re.search(GATE, text):
        assert six, text


def nested(levels, leaf):
    for _ in range(levels):
        leaf = {"k": leaf}
    return leaf


def leaf_of(value):
    while isinstance(value, dict):
        value = value["k"]
    return value


@pytest.mark.parametrize("leaf", [1.5, True, None])
def test_a_number_flag_or_null_deeper_than_any_real_payload_is_masked_whole(leaf):
    scrubber = Scrubber()
    assert leaf_of(scrubber.scrub(nested(64, leaf), {})) is leaf  # at depth 64: kept
    found = {}
    assert leaf_of(scrubber.scrub(nested(65, leaf), found)) == "[secret redacted]"
    assert found == {"secret": 1}


def test_an_integer_past_the_depth_limit_is_masked_only_as_a_card_number():
    scrubber = Scrubber()
    assert leaf_of(scrubber.scrub(nested(65, 12345), {})) == 12345
    found = {}
    assert leaf_of(scrubber.scrub(nested(65, 4111111111111111), found)) == "[card redacted]"
    assert found == {"card": 1}
    assert scrubber.scrub({"a": 40, "b": 81, "c": 1.5, "d": None}, {}) == {
        "a": 40, "b": 81, "c": 1.5, "d": None,
    }  # fmt: skip


AWS_ID = "AKIAQ7ZRXW4N2LMK8PTB"
AWS_SECRET = "IZsNbNP0nqdzyPifDaH7/pbek610MH6z1PwI4ezb"
VAULT = "hvs.CAESIxwVDQGcclscO_FqttCjoPeCgeQ1mCGvJnQxcAS-xgDCtBVzQjF9ALZ-Pdp7eF_8_uNm91"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"{AWS_ID} {AWS_SECRET}", AWS_SECRET),  # as a console shows the pair
        (f"{AWS_ID},{AWS_SECRET}", AWS_SECRET),  # a credentials CSV row
        (f"secret {AWS_SECRET} for key id {AWS_ID}", AWS_SECRET),  # either order
        (f"vault token {VAULT} expires soon", VAULT),
        ("export VAULT_TOKEN=hvb.AAAAAQJq7Xv2Lm9Nw4Rt8Ys1Pk6Hd3Jf5Gb0", "hvb.AAAAAQJq7Xv2Lm9N"),
        (
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;"
            "SharedAccessKey=Zq7Xv2Lm9Nw4Rt8Ys1Pk6Hd3Jf5Gb0CaUe2Lo4Ki6M=",
            "Zq7Xv2Lm9Nw4Rt8Ys1Pk6Hd3Jf5Gb0CaUe2Lo4Ki6M=",
        ),
        (
            "AccountName=dev;AccountKey=c2hvcnRlcktleUZvckRldlN0b3JhZ2U=;",
            "c2hvcnRlcktleUZvckRldlN0",
        ),
    ],
)
def test_the_formats_issue_30_found_raw_are_masked(text, secret):
    found: dict[str, int] = {}
    masked = Scrubber().scrub_text(text, found)
    assert secret not in masked, masked
    assert found.get("secret", 0) >= 1


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # a git SHA beside a key id: the id is masked (a key shape), the SHA is no secret
        (
            f"{AWS_ID} 9fceb02d0ae598e95dc970b74767f19372d61af8",
            "9fceb02d0ae598e95dc970b74767f19372d61af8",
        ),
        (f"{AWS_SECRET} alone, no key id anywhere", AWS_SECRET),
        (f"{AWS_ID} " + "x " * 30 + AWS_SECRET, AWS_SECRET),  # too far apart to be a pair
        ("hvs.short", "hvs.short"),
        ("the hvs.CAESIxw file", "hvs.CAESIxw"),
    ],
)
def test_their_look_alikes_are_left_alone(text, kept):
    assert kept in Scrubber().scrub_text(text, {})


@pytest.mark.parametrize("prefix", ["AKIA", "ASIA"])
def test_an_aws_secret_beside_either_kind_of_key_id_is_masked(prefix):
    found: dict[str, int] = {}
    masked = Scrubber().scrub_text(f"{prefix}{AWS_ID[4:]} {AWS_SECRET}", found)
    assert AWS_SECRET not in masked, masked
    assert found["secret"] == 2  # the secret and the key id


def test_the_aws_key_id_prefixes_are_key_shapes():
    # The scrubber looks for an AWS secret only in a text holding a key shape's prefix
    # (one search for most texts): the key id the secret sits beside must be one.
    assert {"AKIA", "ASIA"} <= set(KEY_SHAPES)


def keep(name: str, secret: str, note: str = "") -> str:
    """Keep a secret (a tool that takes one in)."""
    return name


class Keeper:
    @hookimpl
    def toolang_register_tools(self, register):
        register(Tool.from_function(keep, secret_params=("secret",)))


def test_a_parameter_the_tool_declares_a_secret_reaches_it_whole_the_others_are_masked(
    toolang_runtime,
):
    runtime = toolang_runtime("", plugins={"hook-security-filter": plugin, "keeper": Keeper()})

    def verdict(params):
        call = ToolCall("c1", "keep", params)
        context = ToolCallContext(
            call=call, turn_id="t", thread_id="test:1", run_id="r", agent="a", runtime=runtime
        )
        return plugin.toolang_filter_tool_call(call, context)

    key = "ghp_R8mT2vX9qL4wZ7nB3kD6fH1jP5sC0yA2eG4u"
    masked = verdict({"name": "gh", "secret": key, "note": "mail ann@example.com"})
    assert isinstance(masked, Modify)
    assert masked.params == {"name": "gh", "secret": key, "note": "mail [email redacted]"}
    # Nothing else to mask: the declared secret alone is no reason to change the call.
    assert verdict({"name": "gh", "secret": key}) is None
