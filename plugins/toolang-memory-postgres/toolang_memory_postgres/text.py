"""From text to what the ``tsvector`` indexes, and from a query to a ``tsquery`` that
cannot fail.

The tokens are memory-sqlite's (:mod:`toolang_memory_sqlite.text`, the same rules,
kept here because plugins never import each other), so both plugins find the same
entries for the same words:

- scripts written without spaces (Chinese, Japanese, Korean inside a word, Thai, Lao,
  Khmer, Myanmar) are cut into one token per character; a run of them in a query
  becomes a *phrase* (``<->``), so ``喫茶店`` finds exactly that sequence;
- emoji and other symbols become word tokens (``sym127829`` for 🍕);
- compatibility forms are folded (NFKC).

PostgreSQL's parser reads ASCII text well; other text is handed to it as those tokens
separated by spaces (:func:`index_text`), so a server initialised without a locale
(which takes every non-ASCII character for a letter) splits it the same way.

A query never reaches ``to_tsquery`` as syntax: every token is quoted (tokens hold only
letters, digits and marks — no quote can occur), joined with ``|``.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

SEGMENTED_RANGES: Final = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x31FF),  # Bopomofo, Hangul compatibility Jamo, Katakana extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xAC00, 0xD7FF),  # Hangul syllables, Jamo extended B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x3134F),  # CJK extensions B to G
)
"""Scripts written without spaces between words: indexed one character at a time."""

IGNORED: Final = frozenset(
    {0x200C, 0x200D, 0xFE0E, 0xFE0F, 0x20E3, *range(0x1F3FB, 0x1F400), *range(0xE0020, 0xE0080)}
)
"""Joiners, variation selectors, keycap, skin tones, tag characters: not content."""

_STOPWORDS = """a about above after again all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few
    for from had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once
    only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to
    too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves"""
STOPWORDS: Final = frozenset(_STOPWORDS.split())
"""English words too common to help find anything; dropped from queries (not from the
index) unless a query has nothing else."""

_ASCII_WORD: Final = re.compile("[A-Za-z0-9]+")

Term = tuple[str, ...]
"""One query term: a word (one token) or a phrase of adjacent tokens."""


def _segmented(ch: str) -> bool:
    code = ord(ch)
    return any(low <= code <= high for low, high in SEGMENTED_RANGES)


def _kind(ch: str) -> str:
    """``w`` word character, ``s`` segmented-script character, ``m`` combining mark,
    ``y`` symbol, ``-`` anything else (space, punctuation, ignored)."""
    if ord(ch) in IGNORED:
        return "-"
    category = unicodedata.category(ch)
    if category[0] == "M":
        return "m"
    if category[0] in "LN":
        return "s" if _segmented(ch) else "w"
    if category == "So":
        return "y"
    return "-"


def terms(text: str) -> list[Term]:
    """The terms of ``text`` in order: words, runs of segmented-script characters (as
    phrases of one token per character) and symbols (``sym<codepoint>``)."""
    if text.isascii():  # the common case, without looking at each character
        return [(word,) for word in _ASCII_WORD.findall(text)]
    found: list[Term] = []
    word: list[str] = []
    run: list[str] = []
    for ch in unicodedata.normalize("NFKC", text):
        kind = _kind(ch)
        if kind == "m":  # a mark stays with the character it modifies
            if run:
                run[-1] += ch
            elif word:
                word.append(ch)
            continue
        if kind != "w" and word:
            found.append(("".join(word),))
            word = []
        if kind != "s" and run:
            found.append(tuple(run))
            run = []
        if kind == "w":
            word.append(ch)
        elif kind == "s":
            run.append(ch)
        elif kind == "y":
            found.append((f"sym{ord(ch)}",))
    if word:
        found.append(("".join(word),))
    if run:
        found.append(tuple(run))
    return found


def index_text(text: str) -> str | None:
    """What the ``tsvector`` is made of for ``text``: ``None`` for ASCII text (the
    entry's own text is indexed), else its tokens separated by spaces."""
    if text.isascii():
        return None
    return " ".join(" ".join(term) for term in terms(text))


def query_terms(query: str, max_terms: int) -> list[Term]:
    """The distinct terms of ``query`` worth searching for, at most ``max_terms``.

    Stopwords are dropped unless nothing else is left; comparison is case-insensitive.
    """
    seen: set[Term] = set()
    distinct: list[Term] = []
    for term in terms(query):
        folded = tuple(token.lower() for token in term)
        if folded not in seen:
            seen.add(folded)
            distinct.append(term)
    useful = [t for t in distinct if not (len(t) == 1 and t[0].lower() in STOPWORDS)]
    return (useful or distinct)[:max_terms]


def tsquery_text(chosen: list[Term]) -> str:
    """``to_tsquery`` input matching any of ``chosen`` (empty string for no terms): each
    token quoted, a phrase's tokens joined with ``<->``, the terms with ``|``."""
    return " | ".join("(" + " <-> ".join(f"'{token}'" for token in term) + ")" for term in chosen)
