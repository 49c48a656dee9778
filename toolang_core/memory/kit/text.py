"""Query and index text to terms, the same way for every memory plugin.

A full-text index splits words at spaces and punctuation and folds case; three things
such tokenizers (SQLite FTS5's ``unicode61``, PostgreSQL's default parser) do not do
are done here, the same way for stored text and for queries, so that every plugin finds
the same entries for the same words:

- scripts written without spaces (Chinese, Japanese, Korean inside a word, Thai, Lao,
  Khmer, Myanmar) are cut into one token per character (a base character with its
  combining marks); a run of them in a query is a *phrase*, so ``喫茶店`` finds exactly
  that sequence anywhere in a text;
- emoji and other symbols, which word tokenizers drop, become word tokens
  (``sym127829`` for 🍕); variation selectors, joiners and skin tones are dropped;
- compatibility forms are folded (NFKC: full-width letters, ligatures, composed marks).

Tokens hold only letters, digits and marks: a plugin quotes them into its query
language's syntax without escaping (a person's ``NEAR``, ``*``, ``|`` or ``:`` is
punctuation, never syntax).
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
    word: list[str] = []  # the word being read
    run: list[str] = []  # the segmented run being read, one entry per character
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


def spelled_out(text: str) -> str:
    """``text`` as a word tokenizer reads it into the tokens of :func:`terms` (for the
    full-text index to store).

    ASCII text as it is (a tokenizer splitting at spaces and punctuation reads it exactly
    as :func:`terms` does); otherwise NFKC-folded, segmented runs cut into characters and
    symbols spelled as words, the rest kept. Only the special characters are looked at
    one by one: this runs for every entry written.
    """
    if text.isascii():
        return text
    return _SPECIAL.sub(_respell, unicodedata.normalize("NFKC", text))


def _respell(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) == 1 and not _segmented(found):
        kind = _kind(found)
        if kind == "y":
            return f" sym{ord(found)} "
        return " " if ord(found) in IGNORED else found
    return " " + " ".join(" ".join(term) for term in terms(found)) + " "


_SPECIAL: Final = re.compile(
    "[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in SEGMENTED_RANGES) + "]+|[^\\w\\s]"
)
"""A run of segmented-script characters, or one character that is neither a word
character nor a space (punctuation, symbols, joiners, marks)."""


def query_terms(query: str, max_terms: int) -> list[Term]:
    """The distinct terms of ``query`` worth searching for, at most ``max_terms``.

    Stopwords are dropped unless nothing else is left; comparison is case-insensitive.
    """
    seen: set[Term] = set()
    distinct: list[Term] = []
    for term in terms(query):
        # Folded only to compare: the index folds case its own way (ß stays ß, not "ss").
        folded = tuple(token.lower() for token in term)
        if folded not in seen:
            seen.add(folded)
            distinct.append(term)
    useful = [t for t in distinct if not (len(t) == 1 and t[0].lower() in STOPWORDS)]
    return (useful or distinct)[:max_terms]
