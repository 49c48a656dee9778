# ruff: noqa: RUF001 (letters of many scripts are the test data)
"""From text to index terms and from a query to an FTS5 expression that cannot fail."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from toolang_memory_sqlite.schema import TOKENIZER
from toolang_memory_sqlite.text import index_text, match_expression, query_terms, terms

# The module-wide table is emptied by each example, so sharing it is safe.
FIXTURE_REUSED = HealthCheck.function_scoped_fixture


@pytest.fixture(scope="module")
def fts():
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE f USING fts5(body, tokenize = '{TOKENIZER}')")
    yield conn
    conn.close()


def test_words_are_terms_and_punctuation_is_not():
    assert terms("Hello, world! (NEAR) a*b") == [("Hello",), ("world",), ("NEAR",), ("a",), ("b",)]


def test_a_run_of_cjk_characters_is_one_phrase_of_single_characters():
    assert terms("我在東京") == [("我", "在", "東", "京")]
    assert index_text("我在東京 ok").split() == ["我", "在", "東", "京", "ok"]


def test_ascii_text_is_indexed_as_it_is():
    assert index_text("Deploy (staging) at 5pm -- ok?") == "Deploy (staging) at 5pm -- ok?"


def test_emoji_and_joiners_are_respelled_in_the_index():
    assert index_text("go 👨‍👩‍👧 🍕!").split() == [
        "go",
        "sym128104",
        "sym128105",
        "sym128103",
        "sym127829",
        "!",
    ]


def test_hangul_inside_a_word_is_cut_per_syllable():
    assert terms("서울에서") == [("서", "울", "에", "서")]


def test_a_thai_character_keeps_its_combining_marks():
    assert terms("ที่") == [("ที่",)]


def test_emoji_become_word_tokens_without_their_modifiers():
    assert terms("pizza 🍕 🌶️ 👍🏽") == [("pizza",), ("sym127829",), ("sym127798",), ("sym128077",)]


def test_compatibility_forms_are_folded():
    assert terms("ＡＢＣ ﬁle cafe\u0301") == [("ABC",), ("file",), ("café",)]


def test_stopwords_leave_a_query_unless_nothing_else_is_left():
    assert query_terms("where is the zorblax", 10) == [("zorblax",)]
    assert query_terms("to be or not to be", 10) == [("to",), ("be",), ("or",), ("not",)]


def test_query_terms_are_distinct_case_insensitively_and_capped():
    assert query_terms("Alpha alpha ALPHA beta gamma delta", 3) == [
        ("Alpha",),
        ("beta",),
        ("gamma",),
    ]


def test_the_expression_quotes_every_term_and_joins_them_with_or():
    assert match_expression([("near",), ("東", "京")]) == '"near" OR "東 京"'
    assert match_expression([]) == ""


def test_a_cjk_query_matches_the_sequence_anywhere_in_a_text(fts):
    fts.execute("INSERT INTO f (rowid, body) VALUES (1, ?)", (index_text("東京駅の喫茶店"),))
    fts.execute("INSERT INTO f (rowid, body) VALUES (2, ?)", (index_text("喫店茶"),))
    expression = match_expression(query_terms("喫茶店", 8))
    rows = fts.execute("SELECT rowid FROM f WHERE f MATCH ?", (expression,)).fetchall()
    fts.execute("DELETE FROM f")
    assert rows == [(1,)]


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=60))
def test_any_query_text_is_a_valid_match_expression(fts, query):
    expression = match_expression(query_terms(query, 32))
    if expression:
        fts.execute("SELECT rowid FROM f WHERE f MATCH ?", (expression,)).fetchall()


WORDS = st.text(
    alphabet=st.sampled_from(
        "abcdefghijklmnopqrstuvwxyzÀÉÎõüß"
        'абвгдежзαβγδεאבגדהابتثجحखगघ東京喫茶店서울에ไทยกข🍕🎉 ,.!?-*"()'
    ),
    min_size=1,
    max_size=40,
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(WORDS)
def test_a_text_is_found_by_itself(fts, body):
    chosen = query_terms(body, 1000)
    if not chosen:
        return
    fts.execute("INSERT INTO f (rowid, body) VALUES (7, ?)", (index_text(body),))
    try:
        rows = fts.execute(
            "SELECT rowid FROM f WHERE f MATCH ?", (match_expression(chosen),)
        ).fetchall()
    finally:
        fts.execute("DELETE FROM f")
    assert rows == [(7,)]
