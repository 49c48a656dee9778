"""Secrets are masked in text and in nested values; plain text is left alone."""

from __future__ import annotations

import pytest

from toolang_core import MASK, redact, redact_text


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("see https://alice:hunter22@db.example/x", "see https://alice:********@db.example/x"),
        ("Authorization: Bearer abcdefghijkl", "Authorization: Bearer ********"),
        ("BASIC dXNlcjpwYXNzd29yZA==", "BASIC ********"),
        ("key sk-abcdefghijklmnop1234", "key ********"),
        ("key sk-proj-abcdefghijklmnop1234", "key ********"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz", "token ********"),
        ("slack xoxb-1234567890-abcdef", "slack ********"),
        ("aws AKIAABCDEFGHIJKLMNOP", "aws ********"),
        ("google AIzaSyA1234567890abcdefghijklmnopqrstu", "google ********"),
        ("jwt eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeK", "jwt ********"),
        (
            'GET https://a.example/card?api_key=plain123&page=2 "200 OK"',
            'GET https://a.example/card?api_key=********&page=2 "200 OK"',
        ),
        (
            "https://a.example/?access_token=opaque-1;key=k1",
            "https://a.example/?access_token=********;key=********",
        ),
        (
            "https://b.example/o?X-Amz-Signature=abc123&sv=2020&sig=AbC%2B",
            "https://b.example/o?X-Amz-Signature=********&sv=2020&sig=********",
        ),
    ],
)
def test_each_secret_shape_is_masked(text, kept):
    assert redact_text(text) == kept


@pytest.mark.parametrize(
    "text",
    [
        "The quick brown fox. " * 20,
        "high though enough",
        "basically fine",
        "https://example.org/a",
        "https://example.org/search?q=monkey&keyword=token&design=1",
    ],
)
def test_text_without_secrets_is_returned_unchanged(text):
    assert redact_text(text) is text or redact_text(text) == text


def test_values_under_secret_keys_are_masked_whole_at_any_depth():
    value = {"db": {"password": "p", "host": "h"}, "items": [{"api_key": "k"}]}
    assert redact(value) == {
        "db": {"password": "********", "host": "h"},
        "items": [{"api_key": "********"}],
    }


# -- the policy and its detectors --------------------------------------------------------


def _employee_ids(text: str) -> str:
    return text.replace("EMP-123456", "[employee]")


def test_an_installed_detector_applies_to_text_and_nested_values_and_the_undo_removes_it():
    from toolang_core.redaction import current, use_detectors

    undo = use_detectors({"acme:employees": _employee_ids})
    try:
        assert current().detector_names == ("acme:employees",)
        assert redact_text("ask EMP-123456 now") == "ask [employee] now"
        assert redact({"a": ["ask EMP-123456"], "n": 3}) == {"a": ["ask [employee]"], "n": 3}
    finally:
        undo()
    assert redact_text("ask EMP-123456 now") == "ask EMP-123456 now"


def test_long_integers_are_shown_to_the_detectors_and_masked_when_one_masks_them():
    from toolang_core.redaction import use_detectors

    undo = use_detectors({"cards": lambda t: t.replace("4539148803436467", "[card]")})
    try:
        assert redact({"amount": 4539148803436467, "small": 42}) == {
            "amount": "[card]",
            "small": 42,
        }
    finally:
        undo()


def test_ids_and_names_the_runtime_made_are_not_walked():
    from toolang_core.redaction import use_detectors

    seen: list[str] = []

    def spy(text: str) -> str:
        seen.append(text)
        return text

    undo = use_detectors({"spy": spy})
    try:
        redact({"id": "call-123456", "idempotency_key": "t1:tool:c1", "text": "hello there"})
    finally:
        undo()
    assert seen == ["hello there"]


def test_a_secret_named_key_masks_a_whole_nested_value():
    assert redact({"private_key": {"pem": "a", "pw": "b"}}) == {"private_key": "********"}


def test_a_number_under_a_secret_named_key_is_masked_and_a_flag_is_not():
    assert redact({"password": 123456, "token": True, "api_key": ""}) == {
        "password": "********",
        "token": True,
        "api_key": "",
    }


def test_a_system_prompt_of_clean_parts_is_not_scanned_whole_and_one_with_a_secret_is():
    """The system prompt is a new text every turn (the time, the recalled memory): its
    parts are checked (each remembered by the policy's cache), and a model call's step
    does not run the detectors over the whole prompt again. A part holding something to
    mask leaves the whole prompt to be masked as ever."""
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.redaction import use_detectors
    from toolang_core.store.types import TurnRequest, TurnStatus
    from toolang_core.turn.prompt import system_message

    seen: list[str] = []

    def employees(text: str) -> str:
        seen.append(text)
        return text.replace("EMP-4711", "[employee]")

    agent = AgentDefinition(name="helper", description="helps", instruction="Be brief.")
    turn = TurnRequest(
        id="t1", seq=1, source="chat", thread_id="chat:1", thread_group="chat:1",
        priority=0, rank=0.0, input="hi", status=TurnStatus.RUNNING, attempt=1,
        created_at=0.0, updated_at=0.0, sender="ann",
    )  # fmt: skip
    undo = use_detectors({"acme:employees": employees})
    try:
        clean = system_message(agent, turn, notes=["be kind"], memory=["the boat is blue"])
        scanned = len(seen)
        assert redact({"messages": [{"role": "system", "content": clean.content}]}) == {
            "messages": [{"role": "system", "content": clean.content}]
        }
        assert len(seen) == scanned  # not scanned whole again
        assert clean.content not in seen

        leaky = system_message(agent, turn, memory=["ask EMP-4711"])
        assert "EMP-4711" in leaky.content  # the model reads the prompt as it is
        stored = redact({"content": leaky.content})["content"]
        assert "EMP-4711" not in stored and "[employee]" in stored
        assert leaky.content in seen  # scanned whole, as before
    finally:
        undo()


def test_an_aws_secret_access_key_beside_its_key_id_is_masked_with_the_core_rules_alone():
    key_id, secret = "AKIAQ7ZRXW4N2LMK8PTB", "IZsNbNP0nqdzyPifDaH7/pbek610MH6z1PwI4ezb"
    assert redact_text(f"{key_id} {secret}") == f"{MASK} {MASK}"
    assert redact_text(f"{secret},{key_id}") == f"{MASK},{MASK}"
    sha = "9fceb02d0ae598e95dc970b74767f19372d61af8"  # beside an id, but no secret
    assert redact_text(f"{key_id} {sha}") == f"{MASK} {sha}"
    assert redact_text(f"{secret} alone") == f"{secret} alone"


def test_an_aws_secret_beside_a_temporary_key_id_is_masked_with_the_core_rules_alone():
    # ASIA: the key id of temporary credentials; the pair check looks for it too, but the
    # quick look before it asked for "akia" only, so such a pair was stored raw.
    key_id, secret = "ASIAQ7ZRXW4N2LMK8PTB", "IZsNbNP0nqdzyPifDaH7/pbek610MH6z1PwI4ezb"
    assert secret not in redact_text(f"{key_id} {secret}")
    assert secret not in redact_text(f"{secret},{key_id}")


def test_the_cache_of_long_strings_is_bounded_by_size_and_still_masks():
    """Strings past the count-bounded cache's size are remembered by size: distinct
    long tool results do not keep megabytes each alive, turn after turn."""
    from toolang_core.redaction import _CACHED_UP_TO, _LONG_CACHE_CHARS, RedactionPolicy

    policy = RedactionPolicy()
    long_texts = [f"result {n}: " + "x" * (_CACHED_UP_TO - 20) for n in range(60)]
    for text in long_texts:
        assert policy.text(text) == text
    kept = policy._long
    assert 0 < kept.chars <= _LONG_CACHE_CHARS
    assert len(kept) < len(long_texts)  # the oldest were dropped
    secret = "key sk-abcdefghijklmnop1234 " + "y" * 5_000
    masked = policy.text(secret)
    assert masked.startswith("key ********") and policy.text(secret) == masked  # remembered
    policy.mask_values(["yyyyyyyyyy"])  # a new known value: remembered strings go
    assert len(kept) == 0
    assert "yyyyyyyyyy" not in policy.text(secret)
