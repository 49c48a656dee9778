"""From text to what FTS5 indexes, and from a query to a MATCH expression that cannot fail.

SQLite's ``unicode61`` tokenizer splits words at spaces and punctuation, folds case
and (with ``remove_diacritics 2``) accents, and the ``porter`` stemmer joins English
word forms. What it cannot do (scripts without spaces, symbols, compatibility forms)
is done by :mod:`toolang_core.memory.kit` the same way for stored text
(:func:`index_text`) and for queries (:func:`query_terms`); a run of segmented-script
characters in a query becomes an FTS5 *phrase*, so ``喫茶店`` finds exactly that
sequence anywhere in a text.

A query never reaches FTS5 as syntax: every term is a double-quoted string of letters
and digits (quotes cannot occur inside), joined with ``OR``. ``NEAR``, ``*``, ``-``,
``:``, ``^`` and parentheses in a person's text are therefore just punctuation.
"""

from __future__ import annotations

from toolang_core.memory.kit import Term, query_terms, spelled_out, terms

__all__ = ["Term", "index_text", "match_expression", "query_terms", "terms"]


def index_text(text: str) -> str:
    """What the full-text index stores for ``text``: ASCII text as it is (``unicode61``
    reads it exactly as the kit's terms), other text spelled out
    (:func:`toolang_core.memory.kit.spelled_out`)."""
    return spelled_out(text)


def match_expression(chosen: list[Term]) -> str:
    """An FTS5 MATCH expression for any of ``chosen`` (empty string for no terms).

    Tokens hold only letters, digits and marks, so quoting them needs no escaping; a
    phrase is one quoted string of space-separated tokens.
    """
    return " OR ".join('"' + " ".join(term) + '"' for term in chosen)
