"""The streaming masker: a secret split across pieces is masked whole, the pieces join
to what the policy makes of the whole text, and nothing is lost at the end."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings, strategies as st

from toolang_core import StreamMasker, redact_text
from toolang_core.redaction import MASK, RedactionPolicy
from toolang_core.redaction_stream import HOLD_CHARS

KEY = "sk-proj-Zq7Xv2Lm9Nw4Rt8Ys1Pk6Hd3Jf5Gb0Ca"
AWS_ID, AWS_SECRET = "AKIAQ7ZRXW4N2LMK8PTB", "IZsNbNP0nqdzyPifDaH7/pbek610MH6z1PwI4ezb"
TEXT = (
    f"Here is the key you asked for: {KEY} and the pair {AWS_ID} {AWS_SECRET} "
    "then a login postgres://admin:Hunter2Quillfeather@db.example.com/app and "
    "Authorization: Bearer xkSB7f8kBqytsCvxiQftYApiR9d1PhBY, nothing else to add, "
    "just some closing words to end the answer with."
)
RAW = (KEY, AWS_SECRET, "Hunter2Quillfeather", "xkSB7f8kBqytsCvxiQftYApiR9d1PhBY")


def streamed(pieces: list[str], masker: StreamMasker | None = None) -> list[str]:
    masker = masker or StreamMasker()
    out = [masker.push(piece) for piece in pieces]
    out.append(masker.flush())
    return out


def split(text: str, cuts: list[int]) -> list[str]:
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=60))
def test_any_split_joins_to_the_masked_whole_and_shows_no_secret(cuts):
    joined = "".join(streamed(split(TEXT, cuts)))
    assert joined == redact_text(TEXT)
    assert not [raw for raw in RAW if raw in joined]


def test_a_key_split_in_two_is_never_shown_in_part():
    masker = StreamMasker()
    shown = masker.push("Your key: " + KEY[:12])
    shown += masker.push(KEY[12:] + " is ready")
    shown += masker.flush()
    assert shown == f"Your key: {MASK} is ready"


def test_text_is_held_only_a_short_tail_behind():
    words = [f"word{i} " for i in range(60)]
    shown = ""
    masker = StreamMasker()
    for index, word in enumerate(words):
        shown += masker.push(word)
        given = "".join(words[: index + 1])
        assert given.startswith(shown)
        # Behind by the hold and a word or two (each "wordNN " is 7 characters).
        assert len(given) - len(shown) <= HOLD_CHARS + 2 * 7
    assert shown + masker.flush() == "".join(words)


def test_a_pem_block_is_held_until_its_end_line_is_whole():
    body = "\n".join(["MIIEpAIBAAKCAQEAquillfeatherPEMbody0123456789abcdefABCDEF"] * 6)
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
    block = re.compile(r"-----BEGIN [A-Z ]*KEY-----[\s\S]*?-----END [A-Z ]*KEY-----")
    # the SecurityFilter's PEM finder, in short
    policy = RedactionPolicy({"pem": lambda text: block.sub("[key]", text)})
    masker = StreamMasker(policy)
    shown = masker.push("the key is\n")
    for line in pem.splitlines(keepends=True):
        shown += masker.push(line)
        assert "MIIE" not in shown
    after = "\nthat is all " + "and more words " * 10
    shown += masker.push(after)
    shown += masker.flush()
    assert shown == f"the key is\n[key]{after}"


def test_flush_masks_the_rest_and_empties_the_masker():
    masker = StreamMasker()
    assert masker.push(f"short {KEY}") == ""
    assert masker.held == f"short {KEY}"
    assert masker.flush() == f"short {MASK}"
    assert masker.held == "" and masker.flush() == ""


@pytest.mark.parametrize("hold", [0, 8, 200])
def test_the_hold_is_a_parameter(hold):
    text = f"one two three four five six seven eight {KEY} nine ten"
    joined = "".join(streamed(list(text), StreamMasker(hold=hold)))
    assert joined == redact_text(text)


def test_a_policy_of_its_own_is_used_and_its_cache_is_left_alone():
    policy = RedactionPolicy({"upper": lambda text: text.replace("SECRETWORD", "[hidden]")})
    joined = "".join(streamed(["say SECRET", "WORD now ", "and then " * 12], StreamMasker(policy)))
    assert joined == "say [hidden] now " + "and then " * 12
    assert policy._cached.cache_info().currsize == 0  # windows are masked once, not kept
