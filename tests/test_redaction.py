"""Secrets are masked in text and in nested values; plain text is left alone."""

from __future__ import annotations

import pytest

from toolang_core import redact, redact_text


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
    ],
)
def test_each_secret_shape_is_masked(text, kept):
    assert redact_text(text) == kept


@pytest.mark.parametrize(
    "text",
    ["The quick brown fox. " * 20, "high though enough", "basically fine", "https://example.org/a"],
)
def test_text_without_secrets_is_returned_unchanged(text):
    assert redact_text(text) is text or redact_text(text) == text


def test_values_under_secret_keys_are_masked_whole_at_any_depth():
    value = {"db": {"password": "p", "host": "h"}, "items": [{"api_key": "k"}]}
    assert redact(value) == {
        "db": {"password": "********", "host": "h"},
        "items": [{"api_key": "********"}],
    }
